"""irkit.tools."""
