"""Collection rules for the whole repository (doctests of src/ included)."""

import importlib.util

# leapml.distributed needs the optional dask extra; without it its doctests cannot import
collect_ignore = [] if importlib.util.find_spec("distributed") else ["src/leapml/distributed.py"]
