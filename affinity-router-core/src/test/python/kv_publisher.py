#!/usr/bin/env python3
"""A KV-event publisher that speaks vLLM's wire protocol, for the Java subscriber's tests.

Binds a ZeroMQ PUB socket and a ROUTER replay socket on 127.0.0.1 (random ports), prints
"ready <pub_port> <replay_port> <codec>", then reads one JSON command per line from stdin:

  {"op": "publish", "events": [...]}   encode a batch, send it live, keep it for replay
  {"op": "lose", "events": [...]}      encode a batch and keep it for replay, but do not send it
  {"op": "forget_before", "seq": N}    drop buffered batches numbered below N
  {"op": "quit"}

and answers each publish/lose with "seq <n>". Events are JSON objects with vLLM's field names and
a "type" tag; a hash is an integer or {"bytes": "<hex>"}.

Messages are [topic, seq (8 bytes big-endian), payload] and replays answer [identity, "",
start_seq] per buffered batch from start_seq on, then with an end marker (seq -1, 8 bytes signed),
as vllm/distributed/kv_events.py does: --replay-framing vllm (vLLM since PR #45177) sends
[identity, "", topic, seq, payload] and ends with [identity, "", "", -1, ""]; --replay-framing
legacy (vLLM before it, SGLang) sends [identity, "", seq, payload] and ends with
[identity, "", -1, ""].

Encoding: --encoding sglang declares SGLang's structs (array_like; a salted BlockStored, an
event with "cache_salt", is SGLang's BlockStoredWithMetadata). Otherwise, with msgspec (as vLLM),
the event structs are declared as vLLM declares them:
--encoding array gives msgspec.Struct(array_like=True, omit_defaults=True, tag=True) for the batch
and the events (vLLM before 0.26), --encoding map gives map structs tagged under "type" (vLLM
0.26+). Without msgspec, msgpack is used and the same layouts are built by hand.
"""

import argparse
import json
import sys
import threading
from collections import deque
from typing import Any, Optional, Union

import zmq

try:
    import msgspec

    CODEC = "msgspec"
except ImportError:  # Debian's python3-msgpack only
    msgspec = None
    import msgpack

    CODEC = "msgpack"

END_SEQ = (-1).to_bytes(8, "big", signed=True)
ExternalBlockHash = Union[bytes, int]


def declare_structs(array_like: bool):
    """The event structs, declared as vLLM declares them (array_like for the legacy encoding)."""

    class EventBatch(msgspec.Struct, array_like=array_like, omit_defaults=True, gc=False):
        ts: float
        events: list[Any]
        data_parallel_rank: Optional[int] = None

    class KVCacheEvent(msgspec.Struct, array_like=array_like, omit_defaults=True, gc=False,
                       tag=True):
        pass

    class BlockStored(KVCacheEvent):
        block_hashes: list[ExternalBlockHash]
        parent_block_hash: Optional[ExternalBlockHash]
        token_ids: list[int]
        block_size: int
        lora_id: Optional[int]
        medium: Optional[str]
        lora_name: Optional[str]
        extra_keys: Optional[list[Optional[tuple[Any, ...]]]] = None
        group_idx: Optional[int] = None
        kv_cache_spec_kind: Optional[str] = None
        kv_cache_spec_sliding_window: Optional[int] = None

    class BlockRemoved(KVCacheEvent):
        block_hashes: list[ExternalBlockHash]
        medium: Optional[str]
        group_idx: Optional[int] = None

    class AllBlocksCleared(KVCacheEvent):
        pass

    return EventBatch, {"BlockStored": BlockStored, "BlockRemoved": BlockRemoved,
                        "AllBlocksCleared": AllBlocksCleared}


def declare_sglang_structs():
    """The event structs as SGLang declares them: array_like, a salted BlockStored carrying a
    BlockStoredMetadata map after its seven base fields (SGLang 0.5.18+)."""

    class EventBatch(msgspec.Struct, array_like=True, gc=False):
        ts: float
        events: list[Any]
        attn_dp_rank: Optional[int] = None

    class KVCacheEvent(msgspec.Struct, array_like=True, gc=False, tag=True):
        pass

    class BlockStoredMetadata(msgspec.Struct, omit_defaults=True, gc=False):
        cache_salt: str

    class BlockStored(KVCacheEvent):
        block_hashes: list[int]
        parent_block_hash: Optional[int]
        token_ids: list[int]
        block_size: int
        lora_id: Optional[int]
        medium: Optional[str] = None

    class BlockStoredWithMetadata(BlockStored, tag="BlockStored", kw_only=True):
        metadata: BlockStoredMetadata

    class BlockRemoved(KVCacheEvent):
        block_hashes: list[int]
        medium: Optional[str] = None

    class AllBlocksCleared(KVCacheEvent):
        pass

    return EventBatch, BlockStoredMetadata, BlockStoredWithMetadata, {
        "BlockStored": BlockStored, "BlockRemoved": BlockRemoved,
        "AllBlocksCleared": AllBlocksCleared}


# Field order and defaults of each event, for the msgpack fallback: the bytes msgspec emits.
FIELDS = {
    "BlockStored": [("block_hashes", None, True), ("parent_block_hash", None, True),
                    ("token_ids", None, True), ("block_size", None, True),
                    ("lora_id", None, True), ("medium", None, True), ("lora_name", None, True),
                    ("extra_keys", None, False), ("group_idx", None, False),
                    ("kv_cache_spec_kind", None, False),
                    ("kv_cache_spec_sliding_window", None, False)],
    "BlockRemoved": [("block_hashes", None, True), ("medium", None, True),
                     ("group_idx", None, False)],
    "AllBlocksCleared": [],
}


def to_hash(value):
    if isinstance(value, dict):
        return bytes.fromhex(value["bytes"])
    return value


def normalise(event: dict) -> dict:
    event = dict(event)
    if "block_hashes" in event:
        event["block_hashes"] = [to_hash(h) for h in event["block_hashes"]]
    if event.get("parent_block_hash") is not None:
        event["parent_block_hash"] = to_hash(event["parent_block_hash"])
    return event


class Encoder:
    def __init__(self, encoding: str):
        self.array_like = encoding != "map"
        self.sglang = encoding == "sglang"
        if self.sglang and msgspec is None:
            raise SystemExit("--encoding sglang needs msgspec")
        if self.sglang:
            (self.batch_type, self.metadata_type, self.salted_type,
             self.event_types) = declare_sglang_structs()
            self.encoder = msgspec.msgpack.Encoder()
        elif msgspec is not None:
            self.batch_type, self.event_types = declare_structs(self.array_like)
            self.encoder = msgspec.msgpack.Encoder()

    def encode_sglang(self, ts: float, events: list[dict]) -> bytes:
        structs = []
        for e in events:
            tag = e.pop("type")
            salt = e.pop("cache_salt", None)
            cls = self.event_types[tag]
            names = cls.__struct_fields__
            required = len(names) - len(cls.__struct_defaults__)
            fields = {k: e.get(k) for i, k in enumerate(names) if i < required or k in e}
            if salt is not None:
                structs.append(self.salted_type(**fields,
                                                metadata=self.metadata_type(cache_salt=salt)))
            else:
                structs.append(cls(**fields))
        return self.encoder.encode(self.batch_type(ts=ts, events=structs, attn_dp_rank=0))

    def encode(self, ts: float, events: list[dict]) -> bytes:
        events = [normalise(e) for e in events]
        if self.sglang:
            return self.encode_sglang(ts, events)
        if msgspec is not None:
            structs = []
            for e in events:
                cls = self.event_types[e.pop("type")]
                names = cls.__struct_fields__
                required = len(names) - len(cls.__struct_defaults__)
                structs.append(cls(**{k: e.get(k) for i, k in enumerate(names)
                                      if i < required or k in e}))
            return self.encoder.encode(self.batch_type(ts=ts, events=structs,
                                                       data_parallel_rank=0))
        return msgpack.packb(self.by_hand(ts, events), use_bin_type=True)

    def by_hand(self, ts: float, events: list[dict]):
        packed = []
        for e in events:
            tag = e["type"]
            fields = FIELDS[tag]
            if self.array_like:
                # msgspec writes every field of an array_like struct, defaults included
                packed.append([tag] + [e.get(name, default) for name, default, _ in fields])
            else:
                m = {"type": tag}
                for name, default, required in fields:
                    v = e.get(name, default)
                    if required or v is not None:
                        m[name] = v
                packed.append(m)
        if self.array_like:
            return [ts, packed, 0]
        return {"ts": ts, "events": packed, "data_parallel_rank": 0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--encoding", choices=["array", "map", "sglang"], required=True)
    parser.add_argument("--topic", default="")
    parser.add_argument("--replay-framing", choices=["vllm", "legacy"], default="vllm")
    args = parser.parse_args()

    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub.setsockopt(zmq.LINGER, 0)
    pub_port = pub.bind_to_random_port("tcp://127.0.0.1")
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    replay_port = router.bind_to_random_port("tcp://127.0.0.1")

    encoder = Encoder(args.encoding)
    topic = args.topic.encode("utf-8")
    buffer: deque = deque(maxlen=10_000)
    lock = threading.Lock()
    running = threading.Event()
    running.set()

    def serve_replays() -> None:
        poller = zmq.Poller()
        poller.register(router, zmq.POLLIN)
        while running.is_set():
            if not poller.poll(50):
                continue
            frames = router.recv_multipart()
            if len(frames) != 3:
                continue
            client, _, start = frames
            start_seq = int.from_bytes(start, "big")
            with lock:
                batches = [(s, b) for s, b in buffer if s >= start_seq]
            if args.replay_framing == "vllm":
                for s, b in batches:
                    router.send_multipart((client, b"", topic, s.to_bytes(8, "big"), b))
                router.send_multipart((client, b"", b"", END_SEQ, b""))
            else:
                for s, b in batches:
                    router.send_multipart((client, b"", s.to_bytes(8, "big"), b))
                router.send_multipart((client, b"", END_SEQ, b""))

    replayer = threading.Thread(target=serve_replays, daemon=True)
    replayer.start()
    print(f"ready {pub_port} {replay_port} {CODEC}", flush=True)

    seq = 0
    ts = 1_789_095_808.0
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "quit":
            break
        if op == "forget_before":
            with lock:
                while buffer and buffer[0][0] < command["seq"]:
                    buffer.popleft()
            print("ok", flush=True)
            continue
        ts += 0.001
        payload = encoder.encode(ts, command["events"])
        with lock:
            buffer.append((seq, payload))
        if op == "publish":
            pub.send_multipart((topic, seq.to_bytes(8, "big"), payload))
        print(f"seq {seq}", flush=True)
        seq += 1

    running.clear()
    replayer.join(timeout=2)
    pub.close()
    router.close()
    ctx.term()


if __name__ == "__main__":
    main()
