"""irkit's version: what a library records it was built by, and checks when it is loaded
(`irkit.exporters.library`). A module of its own so that any layer can read it without
importing the `irkit` package's public API, which sits above every layer."""

VERSION = "0.1.0"
