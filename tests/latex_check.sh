#!/bin/sh
# latex_check.sh DIR: compiles DIR/report.tex standalone and every DIR/tex/<id>.tex inside a
# two-column article with pdflatex; fails (exit 1, naming the file) on a LaTeX error or an
# overfull box wider than 10 pt. Prints one line per document: errors, overfull boxes.
dir=$1
bad=0
check() { # $1: document name (without .tex) in $dir
	( cd "$dir" && pdflatex -interaction=nonstopmode -halt-on-error "$1.tex" >/dev/null 2>&1 )
	rc=$?
	log="$dir/$1.log"
	errs=$(grep -c '^!' "$log")
	over=$(grep -o 'Overfull \\[hv]box ([0-9.]*pt' "$log" | grep -o '[0-9.]*pt' |
		awk '{ v = $1 + 0; if (v > 10) n++ } END { print n + 0 }')
	echo "$1: rc $rc, $errs error(s), $over overfull box(es) > 10 pt"
	if [ "$rc" -ne 0 ] || [ "$errs" -ne 0 ] || [ "$over" -ne 0 ]; then bad=1; fi
}
check report
for f in "$dir"/tex/*.tex; do
	[ -e "$f" ] || continue
	id=$(basename "$f" .tex)
	printf '\\documentclass[twocolumn]{article}\n\\usepackage{booktabs}\n\\begin{document}\n\\input{tex/%s}\n\\end{document}\n' "$id" >"$dir/col_$id.tex"
	check "col_$id"
done
exit $bad
