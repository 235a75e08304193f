# SPDX-License-Identifier: Apache-2.0
# Plot of scripts/bench.sh: kernel payload bytes per cycle against payload size (log scale), with the
# 64 B/cycle bus limit and each kind's input-beat limit S / ceil((hdr + S) / 64) (hdr = 14 bytes tagged,
# 18 untagged; one input beat per cycle).
#   gnuplot -e "datafile='DIR/bench_plot.dat'; outfile='DIR/bench.png'; buslimit=64" scripts/bench_plot.gp
# datafile columns: S, bytes/cycle of tagged/align 0, tagged/37, untagged/0, untagged/37,
# input limit tagged, input limit untagged, then the row's ceiling min(input limit, W limit) in the
# order of columns 2-5 (the W limit: one AXI write beat per cycle; one line per payload size > 0). Measured rows are points
# only: a line between two sizes would cross the saw-tooth limit.
if (!exists("datafile")) datafile = 'build/bench/bench_plot.dat'
if (!exists("outfile")) outfile = 'build/bench/bench.png'
if (!exists("buslimit")) buslimit = 64
set terminal pngcairo size 1000,620 font "DejaVu Sans,11"
set output outfile
set title "rnic\\_kernel (DATA\\_WIDTH 512): placed payload bytes per cycle, back-to-back segments"
set xlabel "payload bytes per DDP segment (S)"
set ylabel "bytes per cycle"
set logscale x 2
set xrange [1:16384]
set yrange [0:72]
set format x "%.0f"
set xtics (1, 4, 16, 64, 256, 1024, 4096, 16384)
set ytics 8
set grid xtics ytics lc rgb "#dddddd"
set key right bottom box opaque
set samples 4000
lim(x, h) = x / ceil((h + x) / real(buslimit))
plot buslimit with lines lw 2 dt 2 lc rgb "#000000" title sprintf("bus limit %d B/cycle", buslimit), \
     lim(x, 14) with lines lw 1 lc rgb "#e08080" title "input-beat limit, tagged (hdr 14)", \
     lim(x, 18) with lines lw 1.5 dt 3 lc rgb "#4040ff" title "input-beat limit, untagged (hdr 18)", \
     datafile using 1:8 with points pt 2 ps 1.6 lw 1.5 lc rgb "#000000" title "row ceiling min(input, W), aligned", \
     datafile using 1:9 with points pt 1 ps 1.6 lw 1.5 lc rgb "#808080" title "row ceiling min(input, W), % 64 = 37", \
     datafile using 1:10 with points pt 2 ps 1.6 lw 1.5 lc rgb "#000000" notitle, \
     datafile using 1:11 with points pt 1 ps 1.6 lw 1.5 lc rgb "#808080" notitle, \
     datafile using 1:2 with points pt 7 ps 2.0 lc rgb "#c00000" title "tagged, aligned", \
     datafile using 1:3 with points pt 6 ps 2.6 lw 1.5 lc rgb "#c00000" title "tagged, address % 64 = 37", \
     datafile using 1:4 with points pt 5 ps 0.9 lc rgb "#0000c0" title "untagged, aligned", \
     datafile using 1:5 with points pt 4 ps 1.4 lw 1.5 lc rgb "#0000c0" title "untagged, address % 64 = 37"
