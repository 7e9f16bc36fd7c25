"""Time and peak memory of parsing one file per supported format at the upload limit.

Builds a ~10 MB XLSX, a 200-page PDF (text and a ruled table on every page), a ~10 MB CSV and
JSON, and large PNG/JPEG images, then parses each in a fresh process and prints a table:
wall time, peak RSS above the process baseline, and the tracemalloc peak (Python heap).

    uv run python bench/parse_files.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LIMIT = 10 * 1024 * 1024


def build_xlsx(path: Path) -> None:
    import openpyxl

    rng = random.Random(1)
    book = openpyxl.Workbook(write_only=True)
    for name, rows in (("Data", 128_000), ("Summary", 2000)):
        sheet = book.create_sheet(name)
        sheet.append([f"col{c}" for c in range(8)])
        for r in range(rows):
            sheet.append([f"{rng.getrandbits(40):010x}" for _ in range(6)] + [r, r * 1.5])
    book.save(path)


def build_xlsx_dimensioned(path: Path) -> None:
    """The same workbook with the <dimension> element Excel and LibreOffice always write
    (openpyxl's write-only mode omits it, which makes openpyxl scan each sheet at load)."""
    import zipfile

    source = path.with_name("book.xlsx")
    if not source.exists():
        build_xlsx(source)
    sizes = {"xl/worksheets/sheet1.xml": 128_001, "xl/worksheets/sheet2.xml": 2001}
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename in sizes:
                ref = f'<dimension ref="A1:H{sizes[info.filename]}" />'
                data = data.replace(b"</sheetPr>", b"</sheetPr>" + ref.encode(), 1)
            dst.writestr(info.filename, data)


def build_pdf(path: Path, pages: int = 200) -> None:
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path))
    for number in range(1, pages + 1):
        for line in range(25):
            pdf.drawString(
                40, 800 - line * 16, f"Page {number}, line {line}: revenue and risk notes."
            )
        top = 360
        for row in range(6):
            for col in range(4):
                x, y = 40 + col * 120, top - row * 20
                pdf.rect(x, y, 120, 20)
                pdf.drawString(x + 4, y + 6, f"r{row}c{col}-p{number}")
        pdf.showPage()
    pdf.save()


def build_csv(path: Path) -> None:
    rng = random.Random(2)
    with path.open("w", encoding="utf-8") as f:
        f.write("id;город;сумма;комментарий\n")
        i = 0
        while f.tell() < LIMIT - 200:
            f.write(f"{i};Москва;{rng.randint(1, 10**6)};заказ {rng.getrandbits(32):08x}\n")
            i += 1


def build_json(path: Path) -> None:
    rng = random.Random(3)
    items = []
    size = 0
    while size < LIMIT - 2000:
        item = {"id": len(items), "tags": ["a", "b"], "meta": {"v": rng.getrandbits(48)}}
        items.append(item)
        size += len(json.dumps(item)) + 2
    path.write_text(json.dumps({"items": items}), encoding="utf-8")


def build_png(path: Path) -> None:
    from PIL import Image

    Image.frombytes("RGB", (1800, 1800), os.urandom(1800 * 1800 * 3)).save(path, "PNG")


def build_jpeg(path: Path) -> None:
    from PIL import Image

    noise = Image.frombytes("RGB", (3000, 2000), os.urandom(3000 * 2000 * 3))
    noise.save(path, "JPEG", quality=70)


# label -> (file, builder, read everything: no text budget, so every PDF page is parsed)
BUILDERS = {
    "xlsx": ("book.xlsx", build_xlsx, False),
    "xlsx+dim": ("book_dim.xlsx", build_xlsx_dimensioned, False),
    "pdf": ("report.pdf", build_pdf, False),
    "pdf-all": ("report.pdf", build_pdf, True),
    "csv": ("orders.csv", build_csv, False),
    "json": ("items.json", build_json, False),
    "png": ("noise.png", build_png, False),
    "jpeg": ("noise.jpg", build_jpeg, False),
}


def measure(path: Path, trace: bool, full: bool) -> dict[str, object]:
    """Run in a child process: parse once and report time, RSS and (optionally) heap peak."""
    from agent.documents import Limits, parse

    limits = Limits(accept_images=True)
    if full:
        limits = Limits(accept_images=True, max_chars=50_000_000, deadline_s=600)
    base_rss = _reset_peak_rss()
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    doc = parse(path, limits=limits)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    return {
        "seconds": elapsed,
        "rss_mib": (_status_kib("VmHWM") - base_rss) / 1024,
        "heap_mib": peak / 2**20,
        "chars": len(doc.text),
        "truncated": doc.truncated,
    }


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_peak_rss() -> int:
    """Reset the peak-RSS mark (Linux: clear_refs 5) and return the current RSS in KiB."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
    return _status_kib("VmRSS")


def child(path: Path, trace: bool, full: bool) -> dict[str, object]:
    argv = [sys.executable, __file__, "--measure", str(path)]
    argv += (["--trace"] if trace else []) + (["--full"] if full else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
    return dict(json.loads(out.stdout))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--measure")
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--keep", help="build the files here and keep them")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure), args.trace, args.full)))
        return
    folder = Path(args.keep or tempfile.mkdtemp(prefix="parse-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"{'format':<8} {'file MB':>8} {'build s':>8} {'parse s':>8} {'RSS +MiB':>9} "
        f"{'heap MiB':>9} {'chars':>8} cut"
    )
    for kind, (name, build, full) in BUILDERS.items():
        path = folder / name
        started = time.perf_counter()
        if not path.exists():
            build(path)
        built = time.perf_counter() - started
        plain, traced = child(path, False, full), child(path, True, full)
        print(
            f"{kind:<8} {path.stat().st_size / 2**20:>8.2f} {built:>8.1f} {plain['seconds']:>8.2f} "
            f"{plain['rss_mib']:>9.1f} {traced['heap_mib']:>9.1f} {plain['chars']:>8} "
            f"{'yes' if plain['truncated'] else 'no'}"
        )


if __name__ == "__main__":
    main()
