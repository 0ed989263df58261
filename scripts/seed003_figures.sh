#!/bin/sh
# Seed 003's Figs. 5(a) and 9 on the flit router (docs/seed003.md): one sweep and one plot
# per figure, results under out/seed003/, figures into docs/figures/seed003/. About 15
# minutes on 2 cores (1 s runs of the 8-port router). fig9 is the NIC's multiplexing at load
# 0.6 (Fig. 9(a)'s load), fig9b at 0.8 (Fig. 9(b): fig5a.yaml, whose router is P).
#   scripts/seed003_figures.sh [fig5a fig9 fig9b]   (default: all)
set -e
IBVP=${IBVP:-.venv/bin/ibvp}
OUT=out/seed003
FIGS=docs/figures/seed003
mkdir -p "$FIGS"
for fig in ${*:-fig5a fig9 fig9b}; do
  case $fig in
    fig5a) $IBVP sweep configs/seed003/fig5a.yaml --vary switch.flit.variant=traditional,non_preemptive,preemptive \
             --out "$OUT/fig5a" --jobs 2 || true
           $IBVP plot "$OUT/fig5a" --kind control-split --out "$FIGS/fig5a" \
             --title "Fig. 5(a): control latency, queueing and network (load 0.8)"
           cp "$OUT/fig5a/control-split.csv" "$FIGS/fig5a.csv" ;;
    fig9) $IBVP sweep configs/seed003/fig9.yaml --vary switch.flit.nic_multiplexing=flit,message \
            --out "$OUT/fig9" --jobs 2 || true
          $IBVP plot "$OUT/fig9" --kind control-split --out "$FIGS/fig9" \
            --title "Fig. 9: P router, the NIC's multiplexing (load 0.6)"
          cp "$OUT/fig9/control-split.csv" "$FIGS/fig9.csv" ;;
    fig9b) $IBVP sweep configs/seed003/fig5a.yaml --vary switch.flit.nic_multiplexing=flit,message \
             --out "$OUT/fig9b" --jobs 2 || true
           $IBVP plot "$OUT/fig9b" --kind phase-dmp --out "$FIGS/fig9b" \
             --title "Fig. 9(b): P router, the NIC's multiplexing (load 0.8)"
           cp "$OUT/fig9b/phase-dmp.csv" "$FIGS/fig9b.csv" ;;
    *) echo "unknown figure $fig (fig5a fig9 fig9b)" >&2; exit 2 ;;
  esac
  rm -f "$FIGS/$fig.svg"  # the docs show the PNG
done
