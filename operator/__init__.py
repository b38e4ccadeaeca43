"""The Odradek Kubernetes operator."""
