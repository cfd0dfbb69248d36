"""An end user's memory taken out and put back (docs/export-format.md): the format (format.py), reading a
file of it (reader.py), the export (export.py), the import (imports.py) and their HTTP routes (api.py)."""
