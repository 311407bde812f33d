#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into fuzz/corpus/<target>/.

Seeds are derived, never hand-copied: the byte decoders get every hex field of
the golden vectors (tests/vectors/data, docs/vectors.md) routed by vector
kind, the topology and expression targets get the example topologies and the
YAML/expression snippets of docs/, and the properties target the properties
blocks of docs/. Seeds that need a real encoder (Arrow IPC, Avro
bodies) are made with pyarrow/fastavro from the test virtualenv when it is
there ($KRABKA_TEST_VENV), and skipped with a note otherwise. The registry value
targets get Protobuf bodies of fuzz/schemas/every_type.proto written here by the
wire-format rules (plus the golden Protobuf frames) and JSON bodies for
fuzz/schemas/every_type.json and a few other JSON Schemas.

Usage: fuzz/seeds.py [corpus-dir]   (default: fuzz/corpus)
"""

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "fuzz"


def vectors_dir():
    path = ROOT / "tests" / "vectors" / "data"
    if not path.is_dir():
        sys.exit(f"seeds.py: golden vectors not found at {path}")
    return path


class Corpus:
    def __init__(self, out):
        self.out = Path(out)
        self.counts = {}

    def add(self, target, data):
        if isinstance(data, str):
            data = data.encode()
        folder = self.out / target
        folder.mkdir(parents=True, exist_ok=True)
        name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
        (folder / name).write_bytes(data)
        self.counts[target] = self.counts.get(target, 0) + 1


def hex_fields(node, path=""):
    """Yields (path, bytes) for every `*hex` string field anywhere in a vector."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and key.endswith("hex"):
                try:
                    yield f"{path}.{key}", bytes.fromhex(value)
                except ValueError:
                    pass
            else:
                yield from hex_fields(value, f"{path}.{key}")
    elif isinstance(node, list):
        for item in node:
            yield from hex_fields(item, path)


# Vector kind prefix -> targets every hex field of that kind seeds.
ROUTES = {
    "framing.": ["framing"],
    "headers.": ["headers"],
    "barrier.marker": ["barrier_marker"],
    "barrier.": ["barrier_record"],
    "coordination.": ["coordination_record"],
    "snapshot.container": ["snapshot_container", "snapshot_payload"],
    "snapshot.decode_error": ["snapshot_container"],
    "snapshot.detect": ["snapshot_container"],
    "snapshot.tagged_value": ["snapshot_tagged", "snapshot_groupby"],
    "snapshot.groupby": ["snapshot_groupby", "snapshot_payload"],
    "snapshot.rust_byte_store": ["snapshot_byte_store", "snapshot_payload"],
    "snapshot.u64": ["snapshot_payload"],
    "arrow.ipc_sniff": ["arrow_ipc"],
}


def route(kind):
    for prefix, targets in ROUTES.items():
        if kind.startswith(prefix):
            return targets
    return []


def from_vectors(corpus, vectors):
    containers = []
    for file in sorted(vectors.glob("*.json")):
        for vector in json.loads(file.read_text()):
            kind = vector.get("kind", "")
            fields = list(hex_fields(vector))
            for target in route(kind):
                for _, data in fields:
                    corpus.add(target, data)
            if kind.startswith("barrier."):
                # The barrier target splits its input: first byte = key length.
                keys = [d for p, d in fields if p.endswith(".key_hex")]
                values = [d for p, d in fields if p.endswith(".value_hex")]
                for key in keys:
                    for value in values or [b""]:
                        if len(key) < 256:
                            corpus.add("barrier_record", bytes([len(key)]) + key + value)
            if kind.startswith("snapshot.container") and "expected" in vector:
                containers.append(vector)
            if kind == "snapshot.container":
                for path, data in fields:
                    if path.endswith("value_hex"):
                        corpus.add("snapshot_payload", data)
    for vector in containers:
        entries = vector.get("inputs", {}).get("entries", [])
        generation = "A" if vector["kind"].endswith("gen_a") else "B"
        corpus.add("snapshot_lossless", lossless_dump(generation, vector["id"], entries))


def lossless_dump(generation, source, entries):
    """The JSON `snapshot dump --lossless` writes, for a vector's entries."""
    out = []
    for entry in entries:
        name = entry.get("name", "")
        value = bytes.fromhex(entry.get("value_hex", ""))
        out.append(
            {
                "name": name,
                "name_hex": name.encode().hex(),
                "size": len(value),
                "value_base64": base64.b64encode(value).decode(),
            }
        )
    return json.dumps(
        {
            "format": "krabka-streams.snapshot-dump",
            "version": 1,
            "generation": generation,
            "source": source,
            "entries": out,
        }
    )


EXPRESSION_KEYS = re.compile(
    r"^\s*-?\s*(?:filter|predicate|where|on|expr|aggregates?|columns|select|with_columns)\s*:\s*(.+)$"
)


def from_docs(corpus):
    yaml_texts = [p.read_text() for p in sorted((ROOT / "examples").rglob("*.yaml"))]
    docs = sorted((ROOT / "docs").rglob("*.md")) + sorted(ROOT.glob("*.md"))
    for doc in docs:
        text = doc.read_text(errors="replace")
        for lang, body in re.findall(r"```([a-z]*)\n(.*?)```", text, re.S):
            if lang in ("yaml", "yml"):
                yaml_texts.append(body)
            elif lang in ("properties", "ini", "conf"):
                corpus.add("properties_file", body)
    for text in yaml_texts:
        corpus.add("topology_file", text)
        for line in text.splitlines():
            match = EXPRESSION_KEYS.match(line)
            if not match:
                continue
            value = match.group(1).strip()
            items = value.strip("[]").split(",") if value.startswith("[") else [value]
            for item in items:
                item = item.strip().strip("\"'")
                if item and not item.endswith(":"):
                    corpus.add("sql_expression", item)
    # Every string literal of the expression unit tests that reads as an expression.
    for source in sorted((ROOT / "src" / "engine" / "columnar" / "expr").glob("*.rs")):
        for literal in re.findall(r'"((?:[^"\\\n]|\\.)*)"', source.read_text()):
            if re.search(r"[ (<>=*+/-]", literal) and not literal.startswith(("{", "unexpected")):
                corpus.add("sql_expression", literal.replace("\\n", "\n").replace('\\"', '"'))
    # Properties as --command-config files hold them (keys from the spec's -X examples).
    for doc in docs:
        for key, value in re.findall(r"-X\s+([a-z][a-z0-9.]+)=(\S+)", doc.read_text(errors="replace")):
            corpus.add("properties_file", f"# from {doc.name}\n{key}={value}\n{key} : {value}\\\n  continued\n")
        keys = sorted(set(re.findall(r"`((?:ssl|sasl|security|client|request)\.[a-z.]+)`", doc.read_text(errors="replace"))))
        if keys:
            corpus.add("properties_file", "".join(f"! {doc.name}\n{k}=v\\u00e9\n" for k in keys))


def from_avro_corpus(corpus):
    path = ROOT / "tests" / "data" / "avro-canonical-corpus.json"
    if not path.is_file():
        return
    def texts(node):
        if isinstance(node, dict):
            for value in node.values():
                yield from texts(value)
        elif isinstance(node, list):
            for value in node:
                yield from texts(value)
        elif isinstance(node, str) and node[:1] in "{[\"":
            yield node
    for text in texts(json.loads(path.read_text())):
        corpus.add("avro_schema", text)
    corpus.add("avro_schema", (FUZZ / "schemas" / "every_type.avsc").read_text())


ENCODER_SCRIPT = r"""
import io, json, sys, uuid, decimal, datetime
out = sys.argv[1]
def save(target, name, data):
    import os
    os.makedirs(f"{out}/{target}", exist_ok=True)
    open(f"{out}/{target}/seed-{name}", "wb").write(data)
try:
    import pyarrow as pa, pyarrow.ipc as ipc
    vectors = json.load(open(sys.argv[2]))
    rows = [r for v in vectors for r in v.get("inputs", {}).get("records", []) if "value" in r]
    table = pa.table({
        "value": [r["value"] for r in rows],
        "__key": [bytes.fromhex(r.get("key_hex", "")) for r in rows],
        "__timestamp": pa.array([r.get("timestamp", 0) for r in rows], pa.int64()),
        "__partition": pa.array([r.get("partition", 0) for r in rows], pa.int32()),
    })
    dictionary = pa.table({"d": pa.array(["a", "b", "a"]).dictionary_encode(),
                           "l": pa.array([[1], None, [2, 3]]),
                           "s": pa.array([{"x": 1}, None, {"x": 2}])})
    for name, t in (("vectors", table), ("nested", dictionary)):
        for writer, suffix in ((ipc.new_stream, "stream"), (ipc.new_file, "file")):
            sink = io.BytesIO()
            with writer(sink, t.schema) as w:
                w.write_table(t)
            save("arrow_ipc", f"{name}-{suffix}", sink.getvalue())
except ImportError as e:
    print(f"seeds.py: no Arrow IPC seeds ({e})", file=sys.stderr)
try:
    import fastavro
    schema = fastavro.parse_schema(json.load(open(sys.argv[3])))
    record = {"b": True, "i": -3, "l": 1 << 40, "f": 1.5, "d": -2.25, "s": "héllo",
              "raw": b"\x00\xff", "opt": "x", "choice": 7, "tags": ["a", "b"],
              "attrs": {"k": 1}, "colour": "GREEN", "hash": b"abcd",
              "inner": {"x": 1, "nested": [{"m": None, "n": 0.5}]},
              "date": 19000, "tm": 1000, "tu": 1000000, "ts": 1724500000000,
              "tsu": 1724500000000000, "lts": 5, "id": str(uuid.UUID(int=1)),
              "price": decimal.Decimal("12.34")}
    for variant in (record, dict(record, opt=None, choice=None, tags=[], attrs={})):
        sink = io.BytesIO()
        fastavro.schemaless_writer(sink, schema, variant)
        save("avro_value", f"every-type-{len(sink.getvalue())}", sink.getvalue())
        save("avro_schema", f"every-type-{len(sink.getvalue())}",
             open(sys.argv[3], "rb").read() + b"\0" + sink.getvalue())
except ImportError as e:
    print(f"seeds.py: no Avro body seeds ({e})", file=sys.stderr)
"""


def from_encoders(corpus, vectors):
    venv = os.environ.get("KRABKA_TEST_VENV")
    python = Path(venv) / "bin" / "python" if venv else None
    if not python or not python.exists():
        print("seeds.py: KRABKA_TEST_VENV has no python; no Arrow IPC or Avro body seeds", file=sys.stderr)
        return
    subprocess.run(
        [str(python), "-c", ENCODER_SCRIPT, str(corpus.out), str(vectors / "columnar.json"),
         str(FUZZ / "schemas" / "every_type.avsc")],
        check=True,
    )


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def pb_field(number, wire, payload):
    """One Protobuf field: key, then a varint / fixed / length-delimited payload."""
    key = varint(number << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def from_protobuf(corpus, vectors):
    """Bodies of fuzz/schemas/every_type.proto's `Every`, encoded by hand (wire format
    of the Protobuf spec), plus the golden Protobuf frames of the framing vectors."""
    line = pb_field(1, 2, b"sku-1") + pb_field(2, 0, varint(3))
    nested_line = line + pb_field(3, 2, line)
    every = b"".join([
        pb_field(1, 2, b"o-1"),
        pb_field(2, 0, varint(zigzag(-5))),
        pb_field(3, 1, (1 << 40).to_bytes(8, "little")),
        pb_field(4, 1, bytes.fromhex("000000000000f83f")),
        pb_field(5, 0, varint(1)),
        pb_field(6, 2, b"\x00\xff"),
        pb_field(7, 0, varint(1)),
        pb_field(8, 2, nested_line),
        pb_field(8, 2, line),
        pb_field(9, 2, pb_field(1, 2, b"k") + pb_field(2, 0, varint(7))),
        pb_field(10, 2, pb_field(1, 0, varint(2)) + pb_field(2, 2, line)),
        pb_field(11, 2, pb_field(1, 0, varint(1724500000)) + pb_field(2, 0, varint(5))),
        pb_field(12, 2, pb_field(1, 2, b"note")),
        pb_field(13, 2, pb_field(1, 0, varint(3))),
        pb_field(14, 2, pb_field(1, 2, pb_field(1, 2, b"a") + pb_field(2, 2, pb_field(3, 2, b"v")))),
        pb_field(15, 2, pb_field(1, 0, varint(90))),
        pb_field(16, 2, b"card"),
        pb_field(18, 0, varint(-1)),
        pb_field(19, 2, b"t1"),
        pb_field(19, 2, b"t2"),
        pb_field(20, 2, pb_field(1, 2, b"parent") + pb_field(17, 0, varint(9))),
        pb_field(21, 5, bytes.fromhex("0000c03f")),
        pb_field(22, 5, (-2 & 0xFFFFFFFF).to_bytes(4, "little")),
        pb_field(23, 0, varint(1 << 63)),
        pb_field(24, 2, varint(zigzag(-1)) + varint(zigzag(300))),
        pb_field(25, 2, pb_field(4, 0, varint(1))),
        pb_field(26, 2, pb_field(1, 2, pb_field(2, 1, bytes(8)))),
        pb_field(27, 2, pb_field(1, 2, b"blob")),
        pb_field(28, 2, varint(0) + varint(1) + varint(7)),
    ])
    other = pb_field(1, 2, b"x")
    # Mode byte (see fuzz_targets/protobuf_value.rs): 1 frames the body at PATHS[mode >> 2].
    for path_index, body in ((1, every), (1, b""), (0, other), (2, nested_line), (1, line)):
        corpus.add("protobuf_value", bytes([1 | path_index << 2]) + body)
    corpus.add("protobuf_value", b"\x00" + bytes.fromhex("0000000001" + "0201") + every)
    corpus.add("protobuf_value", b"\x00" + bytes.fromhex("0000000001" + "00") + other)
    proto = (FUZZ / "schemas" / "every_type.proto").read_bytes()
    corpus.add("protobuf_value", bytes([3 | 1 << 2]) + proto + b"\0" + every)
    small = b'syntax = "proto3"; message M { oneof o { string a = 1; M m = 2; } repeated M r = 3; }'
    corpus.add("protobuf_value", b"\x03" + small + b"\0" + pb_field(2, 2, pb_field(1, 2, b"a")))
    for vector in json.loads((vectors / "framing.json").read_text()):
        if "PB" in vector["id"]:
            for _, data in hex_fields(vector):
                corpus.add("protobuf_value", b"\x00" + data)


def from_json_schema(corpus):
    """Bodies for fuzz/schemas/every_type.json, other JSON Schemas with their bodies,
    and the schema of the golden JSON-Schema nullability vector."""
    every = (FUZZ / "schemas" / "every_type.json").read_bytes()
    bodies = [
        {"id": "o-1", "n": 5, "ratio": 1.5, "paid": True, "maybe": None, "note": "x",
         "tags": ["a", "b"], "line": {"sku": "s", "qty": 2}, "lines": [{"sku": "t"}],
         "at": "2026-11-29T12:00:00Z", "anything": {"deep": [1, {"x": None}]}},
        {"id": "o-2", "n": -9223372036854775808},
        {"n": 1.0, "id": 7},
        {"id": "\u00e9\ud83d\ude00", "n": 18446744073709551615},
    ]
    for body in bodies:
        text = json.dumps(body).encode()
        corpus.add("json_schema_value", b"\x01" + text)
        corpus.add("json_schema_value", b"\x00" + bytes.fromhex("0000000001") + text)
        corpus.add("json_schema_value", b"\x02" + every + b"\0" + text)
    for schema, body in (
        ('{"type":"string"}', '"s"'),
        ('{"type":["integer","null"]}', "null"),
        ('{"type":"array","items":{"type":"number"}}', "[1, 2.5]"),
        ('{"$ref":"#/definitions/r","definitions":{"r":{"type":"object","properties":{"a":{"$ref":"#/definitions/r"}}}}}', '{"a":{"a":null}}'),
        ('{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"amount":{"type":"integer"},"tags":{"type":"array"}}}', '{"id":"a","amount":1,"tags":[]}'),
    ):
        corpus.add("json_schema_value", b"\x02" + schema.encode() + b"\0" + body.encode())


def crc32c(data):
    """CRC-32C (Castagnoli), as Kafka record batches carry it."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def record_batch(base_offset, records, attributes=0, producer_id=-1):
    """A Kafka v2 record batch of (key, value) records, uncompressed."""
    import struct
    body = b""
    for delta, (key, value) in enumerate(records):
        rec = b"\0" + varint(0) + varint(zigzag(delta))
        rec += varint(zigzag(len(key))) + key
        rec += varint(zigzag(-1)) if value is None else varint(zigzag(len(value))) + value
        rec += varint(0)
        body += varint(zigzag(len(rec))) + rec
    after_crc = struct.pack(">hiqqqhii", attributes, len(records) - 1, 0, 0, producer_id, 0, 0,
                            len(records)) + body
    head = struct.pack(">i", -1) + b"\x02" + struct.pack(">I", crc32c(after_crc))
    batch = head + after_crc
    return struct.pack(">qi", base_offset, len(batch)) + batch


def from_new_targets(corpus):
    """Seeds of the targets of issue 20: run --input files, the projected stream reader,
    the coordination batch decoder, the gzip and JSON codecs and the schema cache file."""
    import gzip
    import struct
    arrow = corpus.out / "arrow_ipc"
    for seed in sorted(arrow.glob("seed-*")) if arrow.is_dir() else []:
        data = seed.read_bytes()
        corpus.add("ipc_file_input", data)
        if data.startswith(b"\xff\xff\xff\xff"):
            for mask in (0x00, 0x01, 0x05, 0xFF):
                corpus.add("ipc_stream_projected", bytes([mask]) + data)
    range_ = record_batch(0, [(b"role/a", b"v1"), (b"role/b", None)])
    range_ += record_batch(2, [(b"role/a", b"v2")], attributes=1 << 4, producer_id=7)
    for from_, aborted in ((0, 2), (1, 99), (2, 0)):
        corpus.add("coordination_batches", struct.pack(">qq", from_, aborted) + range_)
    corpus.add("coordination_batches", struct.pack(">qq", 0, 0) + range_[:-3])
    rows = [b'{"id":"o-1","amount":120,"tags":["x"],"nested":{"a":1.5}}',
            b'{"id":"o-2","amount":null,"tags":[],"nested":null}', b"7", b'"text"', b"[1,2]"]
    corpus.add("json_value", b"\0".join(rows))
    corpus.add("json_value", b"\0".join(rows[:2]))
    for row in rows[:2]:
        corpus.add("gzip_value", gzip.compress(row, mtime=0))
    corpus.add("gzip_value", gzip.compress(b"\0" * 4096, mtime=0))
    cache = {
        "format": "krabka-streams-schema-cache", "version": 1, "registry": "http://localhost:8081",
        "subjects": {"orders-value": {"id": 1, "version": 1, "schemaType": "AVRO",
                                      "schema": '"string"'}},
        "schemas": {
            "1": {"schemaType": "AVRO", "schema": '"string"'},
            "2": {"schemaType": "PROTOBUF", "schema": 'syntax = "proto3"; message A { string id = 1; }',
                  "messageType": "A"},
            "3": {"schemaType": "AVRO", "schema": '{"type":"record","name":"R","fields":[{"name":"d","type":"demo.Dep"}]}',
                  "references": [{"name": "demo.Dep", "subject": "dep", "version": 1,
                                  "schema": '{"type":"fixed","name":"Dep","namespace":"demo","size":2}'}]},
        },
    }
    corpus.add("schema_cache_file", json.dumps(cache))
    corpus.add("schema_cache_file", json.dumps({"format": "krabka-streams-schema-cache", "version": 1}))
    # Join buffers (snapshot::join, version 1): stream time, then each side's batches
    # as (max timestamp, IPC length, IPC stream bytes).
    streams = [seed.read_bytes() for seed in sorted(arrow.glob("seed-*")) if arrow.is_dir()]
    streams = [s for s in streams if s.startswith(b"\xff\xff\xff\xff")][:2]
    def side(batches):
        return struct.pack(">I", len(batches)) + b"".join(
            struct.pack(">qI", ts, len(ipc)) + ipc for ts, ipc in batches)
    corpus.add("snapshot_join", struct.pack(">Iq", 1, 100) + side([]) + side([]))
    for ipc in streams:
        corpus.add("snapshot_join", struct.pack(">Iq", 1, 105) + side([(100, ipc)]) + side([(105, ipc)]))


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else FUZZ / "corpus"
    corpus = Corpus(out)
    vectors = vectors_dir()
    from_vectors(corpus, vectors)
    from_docs(corpus)
    from_avro_corpus(corpus)
    from_encoders(corpus, vectors)
    from_protobuf(corpus, vectors)
    from_json_schema(corpus)
    from_new_targets(corpus)
    for target in sorted(corpus.counts):
        print(f"{target}: {corpus.counts[target]} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
