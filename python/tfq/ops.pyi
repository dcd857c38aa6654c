from typing import Any, Optional, Sequence

import numpy as np

def decode_csv(records: Any, record_defaults: Sequence[Any], field_delim: str = ...,
               use_quote_delim: bool = ..., name: Optional[str] = ..., na_value: str = ...,
               select_cols: Optional[Sequence[int]] = ...) -> list[np.ndarray]: ...
