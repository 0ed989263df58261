#!/bin/sh
# Seed 000's Figs. 7-10 (docs/seed000.md): one sweep and one plot per figure, results under
# out/seed000/, figures into docs/figures/seed000/. About 30 minutes on 2 cores.
#   scripts/seed000_figures.sh [fig7 fig8 fig9 fig10 fig10f]   (default: all)
set -e
IBVP=${IBVP:-.venv/bin/ibvp}
OUT=out/seed000
FIGS=docs/figures/seed000
mkdir -p "$FIGS"
run() {  # name, scenario, x axis, scheme axis, plot title
  $IBVP sweep "configs/seed000/$2" --vary "$3" --vary "$4" --out "$OUT/$1" --jobs 2 || true
  $IBVP plot "$OUT/$1" --kind classes-vs-load --out "$FIGS/$1" --title "$5"
  cp "$OUT/$1/classes.csv" "$FIGS/$1.csv"
  rm -f "$FIGS/$1.svg"  # the docs show the PNG
}
for fig in ${*:-fig7 fig8 fig9 fig10 fig10f}; do
  case $fig in
    fig7) run fig7 fig7.yaml mix.total_load=0.1,0.2,0.3,0.4,0.5,0.6 scheme=@configs/seed000/variants/schemes15.yaml \
            "Fig. 7: 15 nodes, RT:BE 50:50" ;;
    fig8) run fig8 fig8.yaml mix.total_load=0.3,0.4,0.5,0.6 scheme=@configs/seed000/variants/schemes15.yaml \
            "Fig. 8: 15 nodes, RT:BE 30:70" ;;
    fig9) run fig9 fig9.yaml mix.total_load=0.1,0.2,0.3 \
            "scheme=@configs/seed000/variants/schemes30.yaml:SPF,MP+LFU,MP+LFU+Drop" "Fig. 9: 30 nodes, RT:BE 50:50" ;;
    fig10) run fig10 fig10.yaml traffic.load=0.1,0.3,0.5 scheme=@configs/seed000/variants/replication.yaml \
            "Fig. 10a-e: multicast replication (15 nodes)" ;;
    fig10f) $IBVP sweep configs/seed000/fig10f.yaml --vary traffic.load=0.1,0.5 \
              --vary scheme=@configs/seed000/variants/bandwidth.yaml --out "$OUT/fig10f" --jobs 2 || true
            $IBVP plot "$OUT/fig10f" --kind classes-vs-load --y mc_latency_us,uc_latency_us --out "$FIGS/fig10f" \
              --title "Fig. 10f: bandwidth allocation to multicast"
            cp "$OUT/fig10f/classes.csv" "$FIGS/fig10f.csv"
            rm -f "$FIGS/fig10f.svg" ;;
    *) echo "unknown figure $fig (fig7 fig8 fig9 fig10 fig10f)" >&2; exit 2 ;;
  esac
done
