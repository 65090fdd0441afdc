from . import _2024_12  # (upstream imports every version; only 2024.12 is vendored)
