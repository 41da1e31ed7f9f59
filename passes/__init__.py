"""irkit.passes."""
