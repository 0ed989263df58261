#!/bin/sh
# Seed 003's Figs. 5(a) and 9 on the flit router (docs/seed003.md): sweeps and plots, results
# under out/seed003/, figures into docs/figures/seed003/. 1 s runs of the 8-port router, 2 to
# 7 minutes each on a loaded 2-core machine. fig9 is Fig. 9(a): the three routers with the
# traditional NIC (fcfs) and the QoS NIC (virtual_clock) at load 0.6; fig9b is Fig. 9(b) at
# 0.8: the QoS NIC with P and NP, the QoS NIC's message-level multiplexing with P, and the
# traditional NIC with P (four points of fig9b.yaml, each one `--set` away from it).
# fig9_hca asks Fig. 9's question of HCA hosts (the default firmware's QP scheduler as the NIC).
#   scripts/seed003_figures.sh [fig5a fig9 fig9b fig9_hca]   (default: the first three)
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
    fig9) $IBVP sweep configs/seed003/fig9.yaml --vary switch.flit.variant=traditional,non_preemptive,preemptive \
            --vary switch.flit.nic_scheduler=fcfs,virtual_clock --out "$OUT/fig9" --jobs 2 || true
          $IBVP plot "$OUT/fig9" --kind phase-dmp --out "$FIGS/fig9" --title "Fig. 9(a): routers x NICs, DMP (load 0.6)"
          cp "$OUT/fig9/phase-dmp.csv" "$FIGS/fig9.csv"
          $IBVP plot "$OUT/fig9" --kind control-split --out "$FIGS/fig9a_control" \
            --title "Fig. 9(a): control latency per router and NIC (load 0.6)"
          cp "$OUT/fig9/control-split.csv" "$FIGS/fig9a_control.csv"
          rm -f "$FIGS/fig9a_control.svg" ;;
    fig9b) # One point per run, then a sweep.csv naming the four (ibvp plot reads it).
           d="$OUT/fig9b"
           mkdir -p "$d"
           printf 'switch.flit.variant,switch.flit.nic_scheduler,switch.flit.nic_multiplexing,point,status\n' > "$d/sweep.csv"
           for pt in preemptive,virtual_clock,flit non_preemptive,virtual_clock,flit preemptive,virtual_clock,message \
                     preemptive,fcfs,flit; do
             IFS=, read v s m <<EOF_PT
$pt
EOF_PT
             ${IBVP_SIM:-build/ibvp-sim} configs/seed003/fig9b.yaml --set switch.flit.variant=$v \
               --set switch.flit.nic_scheduler=$s --set switch.flit.nic_multiplexing=$m --out "$d/$v-$s-$m" --quiet || true
             printf '%s,%s,%s,%s,ok\n' "$v" "$s" "$m" "$v-$s-$m" >> "$d/sweep.csv"
           done
           $IBVP plot "$d" --kind phase-dmp --out "$FIGS/fig9b" \
             --title "Fig. 9(b): QoS NIC + P, + NP, + P/msg; traditional NIC + P (load 0.8)"
           cp "$d/phase-dmp.csv" "$FIGS/fig9b.csv" ;;
    fig9_hca) # Fig. 9's designs on HCA hosts (make_fig9_hca.py): the default firmware as the QoS
           # NIC with packet- and message-level multiplexing, the fcfs_doorbells image as the
           # traditional NIC with both. 0.5 s runs, about 1.5 minutes each.
           d="$OUT/fig9_hca"
           mkdir -p "$d"
           fw=../../build/firmware  # from configs/seed003/
           printf 'nic,multiplexing,point,status\n' > "$d/sweep.csv"
           for pt in qos,packet qos,message traditional,packet traditional,message; do
             IFS=, read nic m <<EOF_PT
$pt
EOF_PT
             if [ "$nic" = qos ]; then img=$fw/libibvp_fw_default.so; sched=vc; else img=$fw/libibvp_fw_fcfs_doorbells.so; sched=fcfs; fi
             ${IBVP_SIM:-build/ibvp-sim} configs/seed003/fig9_hca.yaml --set hca.firmware_image=$img \
               --set hca.firmware_args=sched=$sched,mux=$m --out "$d/$nic-$m" --quiet || true
             printf '%s,%s,%s,ok\n' "$nic" "$m" "$nic-$m" >> "$d/sweep.csv"
           done
           $IBVP plot "$d" --kind phase-dmp --out "$FIGS/fig9_hca" \
             --title "Fig. 9 on HCA hosts: QoS and traditional NIC, packet and message multiplexing (load 0.8)"
           cp "$d/phase-dmp.csv" "$FIGS/fig9_hca.csv" ;;
    *) echo "unknown figure $fig (fig5a fig9 fig9b fig9_hca)" >&2; exit 2 ;;
  esac
  rm -f "$FIGS/$fig.svg"  # the docs show the PNG
done
