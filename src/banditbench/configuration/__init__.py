"""Configuration: the schema, strict loading and the one validation pass that expands a config into runs (grid), parameter declarations (params), slicing and paired comparisons."""
