#!/usr/bin/env python3
"""BASELINE, not mqwatch: the short consumer-lag script an operator would write with confluent-kafka (Python,
librdkafka bundled in its wheel), used by crates/kafka/benches/lag_cycle.rs as the comparison the spec names
(the lag tools on PyPI do not give a correct picture on tansu).

One lag picture: ListGroups, OffsetFetch per group (all in flight at once), one ListOffsets (latest) for every
committed partition, then total lag per group (latest - committed, never negative).

Usage: lag_baseline.py BOOTSTRAP. Reads one line per picture from stdin ("cycle") and answers each with one JSON
line {"seconds": <time for that picture>, "cpu_seconds": <process CPU time for it, librdkafka's threads
included>, "lag": {group: total}}; at end of input prints
{"rss_peak_kib": <VmHWM>, "import_seconds": <time to import the client>} and exits.
"""
import json
import sys
import time

T0 = time.perf_counter()
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, OffsetSpec  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - T0


def picture(admin):
    listed = admin.list_consumer_groups(request_timeout=60).result()
    groups = [g.group_id for g in listed.valid]
    pending = {
        g: admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(g)], request_timeout=60
        )[g]
        for g in groups
    }
    committed = {}
    for g, f in pending.items():
        r = f.result()
        committed[g] = [
            (tp.topic, tp.partition, tp.offset)
            for tp in r.topic_partitions
            if tp.offset >= 0
        ]
    wanted = {(t, p) for c in committed.values() for (t, p, _) in c}
    latest = {}
    if wanted:
        asked = {TopicPartition(t, p): OffsetSpec.latest() for (t, p) in wanted}
        for tp, f in admin.list_offsets(asked, request_timeout=60).items():
            latest[(tp.topic, tp.partition)] = f.result().offset
    return {
        g: sum(max(0, latest[(t, p)] - o) for (t, p, o) in c)
        for g, c in committed.items()
    }


def rss_peak_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    admin = AdminClient({"bootstrap.servers": sys.argv[1]})
    for line in sys.stdin:
        if line.strip() != "cycle":
            continue
        start, cpu = time.perf_counter(), time.process_time()
        lag = picture(admin)
        out = {
            "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu,
            "lag": lag,
        }
        print(json.dumps(out), flush=True)
    print(
        json.dumps({"rss_peak_kib": rss_peak_kib(), "import_seconds": IMPORT_SECONDS}),
        flush=True,
    )


if __name__ == "__main__":
    main()
