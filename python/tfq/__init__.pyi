from . import data as data, errors as errors, io as io

__version__: str
library_version: str
