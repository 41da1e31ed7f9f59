"""irkit.exporters: compiled models as artifacts for other programs.

- `library.py` — a shared library of every model's functions with its C header and the
  sidecar metadata `model.so.json` (and the fingerprint that ties them), and reading one
  back (`open_library`) for `irkit.load`;
- `library_c.py` — the C side: the header, checked entry points, the library's own copy of
  the variables;
- `output_files.py` — outputs written to temporaries and renamed into place together.

It sits above the backends (it links their objects) and below the runtime.
"""
