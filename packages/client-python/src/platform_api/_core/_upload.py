"""A file sent as the body of an upload (`client.imports.create(file=...)`): one multipart part."""

from __future__ import annotations

import os
import uuid
from typing import IO, Tuple, Union

from .._types import Omit

__all__ = ["FileInput", "Upload"]

FileContent = Union[bytes, IO[bytes]]

FileInput = Union[bytes, "os.PathLike[str]", IO[bytes], Tuple[str, FileContent]]
"""The file: its bytes, an open binary file, a path (`pathlib.Path("students.csv")`), or a
`(filename, bytes or binary file)` pair. It is read whole before sending (once, however many
times the call is retried)."""

_TYPES = {"csv": "text/csv", "ndjson": "application/x-ndjson"}


class Upload:
    """The multipart body of an upload: the file as the part `file`."""

    def __init__(self, file: FileInput, *, format: Union[str, Omit, None] = None) -> None:
        name = "upload"
        content: FileContent
        if isinstance(file, tuple):
            name, content = file
        elif isinstance(file, os.PathLike):
            name = os.path.basename(os.fspath(file))
            with open(file, "rb") as handle:
                content = handle.read()
        else:
            content = file
            name = os.path.basename(str(getattr(file, "name", name)))
        if not isinstance(content, bytes):
            if isinstance(content, str):
                raise TypeError("file: give bytes, a binary file or a path, not str")
            content = content.read()
        if isinstance(format, str) and format in _TYPES:
            content_type = _TYPES[format]
        elif name.endswith(".csv"):
            content_type = "text/csv"
        elif name.endswith((".ndjson", ".jsonl")):
            content_type = "application/x-ndjson"
        else:
            content_type = "application/octet-stream"
        self.filename = name
        self.content = content
        self.content_type = content_type

    def encode(self) -> Tuple[bytes, str]:
        """The body and its Content-Type (with a fresh boundary)."""
        boundary = uuid.uuid4().hex
        quoted = self.filename.replace("\\", "\\\\").replace('"', "%22").replace("\r", "").replace("\n", "")
        head = (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="file"; filename="{quoted}"\r\n'
            f"Content-Type: {self.content_type}\r\n\r\n"
        ).encode()
        return head + self.content + f"\r\n--{boundary}--\r\n".encode(), (
            f"multipart/form-data; boundary={boundary}"
        )
