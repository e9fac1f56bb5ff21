#!/usr/bin/env bash
# The writer's session, as a new user would have it (docs/transcripts.md, "Writer"): a figure one
# column wide and a results table from the real captures of every harness (tests/fixtures), both
# put in a two-column article, compiled by pdflatex, and the page turned into a PNG to look at.
# Usage: scripts/transcripts/writer.sh [WORK_DIR]   (needs .venv: make setup; pdflatex, pdftoppm)
set -uo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
BR="$REPO/.venv/bin/benchreport"
WORK="${1:-$(mktemp -d)}"; mkdir -p "$WORK"; cd "$WORK"
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
cp -r "$REPO/tests/fixtures" my-runs
echo "## the reviewer's figure: every harness at once, one column wide"
run "$BR" figure throughput my-runs --out all.pdf --width 3.0 --height 2.2 --quiet
echo "## the same with the height left to the figure, then narrowed to one harness"
run "$BR" figure throughput my-runs --out fig.pdf --width 3.0 --quiet
run "$BR" figure throughput my-runs --out fig-vllm.pdf --width 3.0 --harness "vllm bench serve" --quiet
run "$BR" figure throughput my-runs --out fig.png --width 3.0 --harness "vllm bench serve" --quiet
echo "\$ pdfinfo fig-vllm.pdf | grep 'Page size'"; pdfinfo fig-vllm.pdf | grep 'Page size'
echo "## a filter that matches nothing says what there is"
run "$BR" figure throughput my-runs --out x.pdf --harness vllm --quiet
echo "## Table 1 for one column, and what the file says of itself"
run "$BR" table results my-runs/captures --out table1.tex --width column --quiet
run head -2 table1.tex
run grep -c 'begin{table}' table1.tex
cat > paper.tex <<'TEX'
\documentclass[twocolumn,a4paper]{article}
\usepackage[T1]{fontenc}\usepackage{booktabs,array,graphicx}
\begin{document}
\section{Results}
Figure~\ref{fig:tput} shows aggregate throughput against concurrency for the runs of one
harness; Table~1 gives the measured figures of every harness.
\begin{figure}[tbp]\centering\includegraphics{fig-vllm.pdf}
\caption{Aggregate throughput, vllm bench serve.}\label{fig:tput}\end{figure}
\input{table1.tex}
\end{document}
TEX
echo "\$ pdflatex -interaction=nonstopmode -halt-on-error paper.tex  # twice, for the reference"
pdflatex -interaction=nonstopmode -halt-on-error paper.tex > /dev/null 2>&1
pdflatex -interaction=nonstopmode -halt-on-error paper.tex > /dev/null 2>&1; echo "[exit $?]"
echo "\$ grep -c 'Overfull' paper.log; grep -c 'Float too large' paper.log"
grep -c 'Overfull' paper.log; grep -c 'Float too large' paper.log
echo "\$ pdfinfo paper.pdf | grep -E 'Pages|Page size'"; pdfinfo paper.pdf | grep -E 'Pages|Page size'
run pdftoppm -r 100 -png -f 1 -l 1 paper.pdf page
run ls fig.png page-1.png
