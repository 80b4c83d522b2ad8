"""Built-in channels."""
