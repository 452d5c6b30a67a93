"""Part 1: translation, ours vs openlineage-python's classes + Serde vs orjson over prebuilt
dicts; the dry run's CPU per event, whole process."""

from __future__ import annotations

from bench import harness
from bench.harness import ChildResult
from bench.report import Report, Sizes, child, median_child, say, verdict, wall_of


def part_translation(report: Report, sizes: Sizes) -> None:
    runs, repeats = sizes.translation, sizes.translation_repeats
    ws, _ = harness.workspace(runs, log=say)
    say(f"1. translation: {runs:,} runs, best of {repeats}")
    best: dict[str, ChildResult] = {}
    for _ in range(repeats):
        for kind in ("translate_ours", "translate_plain", "translate_parts"):
            done = child(kind, ws=str(ws))
            if kind not in best or wall_of(done) < wall_of(best[kind]):
                best[kind] = done
    ours, plain, parts = best["translate_ours"], best["translate_plain"], best["translate_parts"]
    o, p = ours.result, plain.result
    if o["events"] != p["events"]:
        report.notes.append(f"translation: ours built {o['events']} events, plain {p['events']}")
    part = f"1 ({runs:,} runs)"
    ours_rate = report.measured_child(
        part,
        "ours: dry run = read trail + translate + encode (orjson)",
        ours,
    )
    plain_rate = report.measured_child(
        part,
        "openlineage-python: same reader + build_events + Serde.to_json",
        plain,
    )
    r = parts.result
    floor_rate = report.measured(
        part,
        "floor: orjson.dumps of the same events as prebuilt dicts (no reading, no translation)",
        r["floor"]["events"],
        r["floor"]["wall_s"],
        r["floor"]["cpu_s"],
    )
    pload = f"{parts.load_before} -> {parts.load_after}"
    for name, what in (
        ("read", "breakdown: reading alone (scan + second pass, our reader)"),
        ("translate", "breakdown: our Translator.translate alone"),
        ("plain_build", "breakdown: ol_plain.build_events alone"),
        ("plain_serde", "breakdown: Serde.to_json alone"),
    ):
        report.measured(
            part,
            what,
            r[name].get("events", o["events"]),
            r[name]["wall_s"],
            r[name]["cpu_s"],
            load=pload,
            note="rate per event the runs read yield" if name == "read" else "",
        )
    ratio = ours_rate / plain_rate if ours_rate and plain_rate else None
    cpu_ratio = (p["cpu_s"] / o["cpu_s"]) if o["cpu_s"] else None
    met, short = verdict(ratio, 10)
    report.target(
        "1a",
        "translation: ours vs openlineage-python plain (events/s)",
        f"{ours_rate:,.0f}/s",
        f"{plain_rate:,.0f}/s",
        ratio,
        f"{ratio:.1f}x (CPU time: {cpu_ratio:.1f}x)",
        ">= 10x",
        met,
        short,
    )
    ratio = ours_rate / floor_rate if ours_rate and floor_rate else None
    met, short = verdict(ratio, 0.5)
    report.target(
        "1b",
        "translation: ours vs the orjson floor (events/s)",
        f"{ours_rate:,.0f}/s",
        f"{floor_rate:,.0f}/s",
        ratio,
        f"{ratio:.3f}x (floor is {1 / ratio:.1f}x faster)",
        ">= 0.5x (within ~2x)",
        met,
        short,
    )
    dry_ws, _ = harness.workspace(sizes.dry_run, log=say)
    done = median_child(repeats, "dry_run_memory", ws=str(dry_ws))
    r = done.result
    whole = 1e6 * done.cpu_s / max(1, r["events"])
    report.measured(
        f"1 ({sizes.dry_run:,} runs)",
        "ours: dry run into a null sink, CPU of "
        "the whole process (startup, imports and reading included, from wait4)",
        r["events"],
        done.wall_s,
        done.cpu_s,
        done.max_rss_mb,
        f"{done.load_before} -> {done.load_after}",
        f"measured part alone: {1e6 * r['cpu_s'] / max(1, r['events']):.1f} µs/event",
    )
    met, short = verdict(whole, 12, above=False)
    report.target(
        "1c",
        f"dry run of {sizes.dry_run:,} runs: CPU per event of the whole process",
        f"{whole:.1f} µs",
        "",
        whole,
        f"{whole:.1f} µs",
        "<= 12 µs",
        met,
        short,
    )
