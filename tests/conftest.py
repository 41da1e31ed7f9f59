"""Makes `tests/` importable (pytest puts a conftest's folder on `sys.path`), so tests in
every subfolder share helpers such as `shared_corpus`."""
