"""The fields of the records coordinators keep in their internal topics
(``__consumer_offsets``, ``__transaction_state``): big-endian integers, ``string`` as i16
length + UTF-8 (-1 = null), ``bytes`` as i32 length + data, arrays as an i32 count. A
flexible version writes strings and arrays with compact (unsigned varint, length + 1)
lengths and ends each structure with its tagged fields."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping

from odradek.broker.protocol.varint import read_uvarint, write_uvarint


class RecordFormatError(ValueError):
    """Bytes that are not a coordinator record this broker can read."""


_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class FieldWriter:
    """Writes fields in order; ``done`` gives the bytes."""

    def __init__(self) -> None:
        self._out = bytearray()

    def i8(self, value: int) -> FieldWriter:
        self._out += _I8.pack(value)
        return self

    def i16(self, value: int) -> FieldWriter:
        self._out += _I16.pack(value)
        return self

    def i32(self, value: int) -> FieldWriter:
        self._out += _I32.pack(value)
        return self

    def i64(self, value: int) -> FieldWriter:
        self._out += _I64.pack(value)
        return self

    def string(self, value: str | None) -> FieldWriter:
        if value is None:
            return self.i16(-1)
        encoded = value.encode()
        self.i16(len(encoded))
        self._out += encoded
        return self

    def blob(self, value: bytes) -> FieldWriter:
        self.i32(len(value))
        self._out += value
        return self

    def compact_string(self, value: str) -> FieldWriter:
        encoded = value.encode()
        return self.compact_count(len(encoded)).raw(encoded)

    def compact_nullable_string(self, value: str | None) -> FieldWriter:
        return self.compact_count(None) if value is None else self.compact_string(value)

    def uuid(self, value: uuid.UUID) -> FieldWriter:
        return self.raw(value.bytes)

    def compact_count(self, count: int | None) -> FieldWriter:
        """A compact array's length; None: a null array."""
        self._out += write_uvarint(0 if count is None else count + 1)
        return self

    def tagged(self, fields: Mapping[int, bytes]) -> FieldWriter:
        """A structure's tagged fields, by tag."""
        self._out += write_uvarint(len(fields))
        for tag, data in sorted(fields.items()):
            self._out += write_uvarint(tag) + write_uvarint(len(data))
            self._out += data
        return self

    def raw(self, data: bytes) -> FieldWriter:
        self._out += data
        return self

    def done(self) -> bytes:
        return bytes(self._out)


class FieldReader:
    """Reads fields in order, raising RecordFormatError for what does not fit."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._position = 0

    def _take(self, size: int) -> bytes:
        end = self._position + size
        if size < 0 or end > len(self._data):
            raise RecordFormatError("coordinator record is truncated")
        chunk = self._data[self._position : end]
        self._position = end
        return chunk

    def i8(self) -> int:
        value: int = _I8.unpack(self._take(1))[0]
        return value

    def i16(self) -> int:
        value: int = _I16.unpack(self._take(2))[0]
        return value

    def i32(self) -> int:
        value: int = _I32.unpack(self._take(4))[0]
        return value

    def i64(self) -> int:
        value: int = _I64.unpack(self._take(8))[0]
        return value

    def count(self) -> int:
        count = self.nullable_count()
        if count is None:
            raise RecordFormatError("negative array length in coordinator record")
        return count

    def nullable_count(self) -> int | None:
        """An array's length, None for a null array (-1)."""
        count = self.i32()
        if count < -1:
            raise RecordFormatError("negative array length in coordinator record")
        return None if count == -1 else count

    def version(self, highest: int) -> int:
        version = self.i16()
        if not 0 <= version <= highest:
            raise RecordFormatError(f"coordinator record value version {version} is unknown")
        return version

    def string(self) -> str | None:
        length = self.i16()
        if length == -1:
            return None
        try:
            return self._take(length).decode()
        except UnicodeDecodeError as error:
            raise RecordFormatError(f"coordinator record string: {error}") from None

    def text(self) -> str:
        value = self.string()
        if value is None:
            raise RecordFormatError("null where the coordinator record needs a string")
        return value

    def blob(self) -> bytes:
        return self._take(self.i32())

    def raw(self, size: int) -> bytes:
        return self._take(size)

    def nullable_blob(self) -> bytes | None:
        size = self.i32()
        return None if size == -1 else self._take(size)

    def uvarint(self) -> int:
        try:
            value, self._position = read_uvarint(self._data, self._position)
        except (IndexError, ValueError):
            raise RecordFormatError("coordinator record has a bad varint") from None
        return value

    def compact_nullable_count(self) -> int | None:
        """A compact array's length, None for a null array."""
        encoded = self.uvarint()
        return None if encoded == 0 else encoded - 1

    def compact_text(self) -> str:
        value = self.compact_string()
        if value is None:
            raise RecordFormatError("null where the coordinator record needs a string")
        return value

    def compact_string(self) -> str | None:
        length = self.compact_nullable_count()
        if length is None:
            return None
        try:
            return self._take(length).decode()
        except UnicodeDecodeError as error:
            raise RecordFormatError(f"coordinator record string: {error}") from None

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(bytes=self._take(16))

    def tagged(self) -> dict[int, bytes]:
        """A structure's tagged fields, by tag (the unknown ones are the caller's to skip)."""
        fields = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            fields[tag] = self._take(self.uvarint())
        return fields

    def end(self) -> None:
        if self._position != len(self._data):
            raise RecordFormatError("coordinator record has bytes after its last field")
