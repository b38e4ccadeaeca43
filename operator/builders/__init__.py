"""Pure functions from a custom resource's spec to the Kubernetes objects it needs."""
