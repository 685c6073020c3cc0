# SPDX-License-Identifier: MIT
declare -A a; for ((i = 0; i < 50000; i++)); do a[key$i]=$i; done; echo ${#a[@]}
