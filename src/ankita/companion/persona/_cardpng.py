"""Character cards inside PNG images, as they are shared: the card's JSON, base64-encoded, in a
`tEXt` chunk named `ccv3` (Character Card V3) or `chara` (V2). Reading prefers `ccv3`; writing
puts both, so V2 and V3 readers alike find the card."""

from __future__ import annotations

import base64
import binascii
import struct
import zlib

from ankita._errors import InvalidInput

SIGNATURE = b"\x89PNG\r\n\x1a\n"
KEYWORDS = (b"ccv3", b"chara")  # the order they are read in


def blank_image() -> bytes:
    """A 1x1 transparent image, for exporting a card that came without one."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)  # 1x1, 8-bit RGBA
    pixels = zlib.compress(b"\x00" + b"\x00\x00\x00\x00")  # filter byte, one clear pixel
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", pixels) + _chunk(b"IEND", b"")


def is_png(data: bytes) -> bool:
    return data.startswith(SIGNATURE)


def _chunks(data: bytes, where: str) -> list[tuple[bytes, bytes]]:
    """Every (type, data) chunk, checked: a truncated or corrupt file is refused."""
    if not is_png(data):
        raise InvalidInput(f"{where}: not a PNG image")
    out, at = [], len(SIGNATURE)
    while at < len(data):
        if at + 8 > len(data):
            raise InvalidInput(f"{where}: the PNG is cut short")
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + length]
        crc = data[at + 8 + length : at + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise InvalidInput(f"{where}: the PNG is cut short")
        if struct.unpack(">I", crc)[0] != zlib.crc32(kind + body):
            raise InvalidInput(f"{where}: a PNG chunk ({kind.decode('latin-1')}) is damaged")
        out.append((kind, body))
        at += 12 + length
        if kind == b"IEND":
            break
    return out


def card_json(data: bytes, where: str = "card") -> str:
    """The card's JSON text from a PNG (ccv3 first, then chara)."""
    found: dict[bytes, bytes] = {}
    for kind, body in _chunks(data, where):
        if kind == b"tEXt" and b"\x00" in body:
            keyword, _, text = body.partition(b"\x00")
            if keyword.lower() in KEYWORDS:
                found.setdefault(keyword.lower(), text)
    for keyword in KEYWORDS:
        if keyword in found:
            try:
                return base64.b64decode(found[keyword], validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                raise InvalidInput(
                    f"{where}: its {keyword.decode()} chunk is not base64 of UTF-8 JSON"
                ) from None
    raise InvalidInput(f"{where}: a PNG with no character card in it (no ccv3 or chara chunk)")


def card_text(data: bytes, where: str = "card") -> str:
    """A card file's JSON text, whether the file is a PNG or the JSON itself."""
    if is_png(data):
        return card_json(data, where)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput(f"{where}: neither a PNG image nor UTF-8 JSON") from None


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def with_card(image: bytes | None, text: str, where: str = "image") -> bytes:
    """The image (a blank one if None) with the card in it, any card it held before
    replaced, before IEND."""
    image = image if image is not None else blank_image()
    encoded = base64.b64encode(text.encode("utf-8"))
    kept = [
        (kind, body)
        for kind, body in _chunks(image, where)
        if not (kind == b"tEXt" and body.partition(b"\x00")[0].lower() in KEYWORDS)
    ]
    out = SIGNATURE
    for kind, body in kept:
        if kind == b"IEND":
            for keyword in KEYWORDS:
                out += _chunk(b"tEXt", keyword + b"\x00" + encoded)
        out += _chunk(kind, body)
    return out
