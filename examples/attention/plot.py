"""The attention comparison from the CSVs of `attention --csv` (cudajit) and
`sdpa_bench.py --csv` (PyTorch SDPA's flash and cuDNN back ends): a markdown table with
the ratios, printed, and a plot of TFLOP/s against the sequence length, one panel per
(element type, head dimension) and causal or not.

    python3 plot.py cudajit.csv sdpa.csv attention.png [--title TEXT]

The table needs only the standard library; the plot needs matplotlib (skipped, said so,
where it is missing: run this again where it is installed, on the same CSVs)."""
import argparse
import csv
from collections import defaultdict


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cudajit")
    parser.add_argument("sdpa")
    parser.add_argument("png")
    parser.add_argument("--title", default="Fused attention forward, one H200")
    args = parser.parse_args()
    rows = read(args.cudajit) + read(args.sdpa)
    # (dtype, dim, causal) -> series name -> {seq: TFLOP/s}
    panels = defaultdict(lambda: defaultdict(dict))
    shapes = {}
    for r in rows:
        name = r["impl"] + (f" (KV {r['kv']})" if r["kv"] else "")
        key = (r["dtype"], int(r["dim"]), r["causal"] == "true")
        panels[key][name][int(r["seq"])] = float(r["tflops"])
        shapes[int(r["dim"])] = f"{r['batch']} × {r['heads']}"
    table(panels, shapes)
    plot(panels, shapes, args.png, args.title)


def table(panels, shapes):
    """One row per cudajit series and sequence, with flash's and cuDNN's TFLOP/s and the
    ratios to them."""
    print("| kernel | dtype | head dim | batch × heads | KV tile | seq | causal | cudajit TFLOP/s "
          "| flash TFLOP/s | cuDNN TFLOP/s | cudajit / flash | cudajit / cuDNN |")
    print("| --- | --- | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for (dtype, dim, causal), series in sorted(panels.items()):
        flash, cudnn = series.get("flash", {}), series.get("cudnn", {})
        for name, points in sorted(series.items()):
            if not name.startswith("cudajit"):
                continue
            kv = name.split("KV ")[1].rstrip(")")
            kernel = "wgmma (FA3)" if name.startswith("cudajit-wgmma") else "mma.sync (FA2)"
            for seq, tflops in sorted(points.items()):
                ratio = lambda other: f"{tflops / other[seq]:.2f}" if seq in other else "—"
                value = lambda other: f"{other[seq]:.1f}" if seq in other else "—"
                print(f"| {kernel} | {dtype} | {dim} | {shapes[dim]} | {kv} | {seq} | {str(causal).lower()} "
                      f"| {tflops:.1f} | {value(flash)} | {value(cudnn)} "
                      f"| **{ratio(flash)}** | {ratio(cudnn)} |")


def plot(panels, shapes, png, title):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"\nmatplotlib is not installed here: {png} not written")
        return
    keys = sorted({(dtype, dim) for dtype, dim, _ in panels})
    fig, axes = plt.subplots(len(keys), 2, figsize=(11, 3.2 * len(keys)), squeeze=False)
    styles = {"flash": ("tab:gray", "--"), "cudnn": ("black", ":")}
    for row, (dtype, dim) in enumerate(keys):
        for col, causal in enumerate((False, True)):
            ax = axes[row][col]
            for name, points in sorted(panels.get((dtype, dim, causal), {}).items()):
                seqs = sorted(points)
                color, line = styles.get(name, (None, "-"))
                ax.plot(seqs, [points[s] for s in seqs], line, color=color, marker="o",
                        markersize=3, label=name)
            ax.set_xscale("log", base=2)
            ax.set_ylim(bottom=0)
            ax.set_title(f"{dtype}, head dim {dim}, {shapes.get(dim, '')}, "
                         f"{'causal' if causal else 'not causal'}", fontsize=9)
            ax.set_xlabel("sequence length", fontsize=8)
            ax.set_ylabel("TFLOP/s", fontsize=8)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(png, dpi=110)
    print(f"\nwrote {png}")


if __name__ == "__main__":
    main()
