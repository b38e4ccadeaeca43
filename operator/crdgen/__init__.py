"""CustomResourceDefinitions generated from the operator's models."""
