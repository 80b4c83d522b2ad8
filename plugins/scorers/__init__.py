"""Built-in scoring rubrics."""
