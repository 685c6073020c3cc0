# SPDX-License-Identifier: MIT
# VMAs of a /proc/PID/maps copy by kind, for `memdbg maps`.
#   awk -v lo=0xHEAPSTART -v hi=0xHEAPEND -v exe=/path/of/program -v raw=0|1 -f maps-kinds.awk MAPS
# raw=1 prints "vmas_KIND=N" and "kb_KIND=N" lines; otherwise a small table.
# Portable awk (no strtonum): addresses are compared as zero-padded hex
# strings and converted digit by digit for sizes.
function hex(s,    i, v) {
	v = 0
	s = tolower(s)
	sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
function pad(s) {
	s = tolower(s)
	sub(/^0x/, "", s)
	while (length(s) < 16)
		s = "0" s
	return s
}
function add(kind, kb) {
	if (!(kind in n))
		order[++kinds] = kind
	n[kind]++
	size[kind] += kb
}
BEGIN {
	has_heap = lo != "" && hi != ""
	plo = pad(lo)
	phi = pad(hi)
}
{
	split($1, a, "-")
	kb = (hex(a[2]) - hex(a[1])) / 1024
	path = ""
	for (i = 6; i <= NF; i++)
		path = path (i > 6 ? " " : "") $i
	if (has_heap && pad(a[1]) < phi && pad(a[2]) > plo)
		add("memdbg heap", kb)
	else if (path != "" && path == exe)
		add("program", kb)
	else if (path ~ /\.so([.0-9]*)?( \(deleted\))?$/)
		add("libraries", kb)
	else if (path == "[stack]")
		add("stack", kb)
	else if (path ~ /^\[(vdso|vvar|vvar_vclock|vsyscall)\]$/)
		add("kernel (vdso, vvar)", kb)
	else if (path == "[heap]")
		add("brk heap ([heap])", kb)
	else if (path ~ /^\/memfd:/)
		add("memfd", kb)
	else if (path == "" && $2 ~ /^---/)
		add("guards (PROT_NONE anon)", kb)
	else if (path == "" || path ~ /^\[anon/)
		add("anonymous", kb)
	else
		add("other files", kb)
}
function human(kb) {
	if (kb >= 1048576)
		return sprintf("%.1f GiB", kb / 1048576)
	if (kb >= 1024)
		return sprintf("%.1f MiB", kb / 1024)
	return sprintf("%d KiB", kb)
}
END {
	if (raw) {
		for (k = 1; k <= kinds; k++) {
			key = order[k]
			gsub(/ \(.*/, "", key)
			gsub(/[^A-Za-z]+/, "_", key)
			printf "vmas_%s=%d\nkb_%s=%d\n", key, n[order[k]], key, size[order[k]]
		}
		exit
	}
	printf "  %-26s %8s %12s\n", "kind", "VMAs", "size"
	for (k = 1; k <= kinds; k++)
		printf "  %-26s %8d %12s\n", order[k], n[order[k]], human(size[order[k]])
}
