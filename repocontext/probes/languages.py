"""Language inventory from the file index (no file is opened)."""

from __future__ import annotations

from repocontext.model import LanguageStat
from repocontext.probe import Probe, ProbeContext, ProbeOutput


class LanguagesProbe(Probe):
    name = "languages"
    version = "1"
    inputs = ("**",)
    produces = ("languages",)

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        stats: dict[str, LanguageStat] = {}
        for record in ctx.files:
            if record.language is None:
                continue
            stat = stats.get(record.language)
            if stat is None:
                stat = stats[record.language] = LanguageStat()
            stat.files += 1
            stat.bytes += record.size
        ordered = dict(sorted(stats.items(), key=lambda kv: (-kv[1].bytes, kv[0])))
        return ProbeOutput(values={"languages": {k: v.model_dump() for k, v in ordered.items()}})
