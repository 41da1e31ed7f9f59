"""irkit.backends."""
