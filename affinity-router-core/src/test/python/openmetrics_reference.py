"""Re-serves a Prometheus text exposition as OpenMetrics text, the way prometheus_client serves it
to a scraper that asks for application/openmetrics-text: the file's families are read with the
library's own parser and written with its OpenMetrics exposition (which, since 0.22, escapes the
colons of vLLM's and SGLang's names to underscores in sample lines). Usage: FILE > stdout."""
import sys

from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry


class Replay:
    def __init__(self, text):
        self.families = list(text_string_to_metric_families(text))

    def collect(self):
        return self.families


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Replay(text))
    sys.stdout.write(generate_latest(registry).decode("utf-8"))


if __name__ == "__main__":
    main()
