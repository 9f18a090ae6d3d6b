# bash completion for ptcollect                            -*- shell-script -*-

_ptcollect_pmu_terms()
{
	local d=${PTCOLLECT_SYSFS:-/sys}/bus/event_source/devices/intel_pt/format
	[[ -d $d ]] && command ls "$d" 2>/dev/null
	echo config config1 config2
}

# --filter: the actions, and "filter SYM @ PROG" for each function of the program
# given after "--" (the names come from 'ptcollect symbols').
_ptcollect_filter()
{
	local i prog="" sym act
	for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			prog=${COMP_WORDS[i + 1]:-}
			break
		fi
	done
	COMPREPLY=()
	for act in filter tracestop; do
		[[ "$act " == "$cur"* ]] && COMPREPLY+=("$act ")
	done
	[[ -n $prog ]] || return
	while read -r sym; do
		for act in filter tracestop; do
			[[ "$act $sym @ $prog" == "$cur"* ]] && COMPREPLY+=("$act $sym @ $prog")
		done
	done < <(${words[0]:-ptcollect} symbols "$prog" 2>/dev/null | awk 'NR > 4 { print $5 }')
	compopt -o nospace 2>/dev/null
}

# --trigger KIND:FILE:SYMBOL: the kinds, then files, then FILE's functions ('ptcollect symbols').
_ptcollect_trigger()
{
	local cur kind file sym
	_get_comp_words_by_ref -n : cur
	COMPREPLY=()
	case $cur in
	*:*:*)
		kind=${cur%%:*} file=${cur#*:}
		file=${file%%:*}
		while read -r sym; do
			COMPREPLY+=("$kind:$file:$sym")
		done < <(${words[0]:-ptcollect} symbols "$file" 2>/dev/null | awk 'NR > 4 { print $5 }')
		COMPREPLY=($(compgen -W "${COMPREPLY[*]}" -- "$cur"))
		;;
	uprobe:* | breakpoint:*)
		kind=${cur%%:*}
		COMPREPLY=($(compgen -f -P "$kind:" -- "${cur#*:}"))
		compopt -o nospace 2>/dev/null
		;;
	*)
		COMPREPLY=($(compgen -W "uprobe: breakpoint:" -- "$cur"))
		compopt -o nospace 2>/dev/null
		;;
	esac
	__ltrim_colon_completions "$cur"
}

_ptcollect()
{
	local cur prev words cword
	# ':' stays inside a word: decode's options are --pevent:primary and the like.
	_init_completion -n : || return

	local cmds="record caps info archive dump symbols import decode report help"
	local global_opts="--help --version --json"
	local cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		fi
		return
	fi

	case $cmd in
	help)
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		;;
	caps)
		COMPREPLY=($(compgen -W "--json --help" -- "$cur"))
		;;
	info)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--json --script --help" -- "$cur"))
		else
			_filedir -d
		fi
		;;
	archive)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--json --help" -- "$cur"))
		else
			_filedir -d
		fi
		;;
	dump)
		case $prev in
		--format) COMPREPLY=($(compgen -W "pevent pt" -- "$cur")); return ;;
		--sample-type | --cpu | --mtc-freq | --nom-freq | --cpuid-0x15.eax | --cpuid-0x15.ebx | \
		--pevent:sample-type | --pevent:time-zero | --pevent:time-shift | --pevent:time-mult | \
		--pevent:tsc-offset) return ;;
		--pevent:primary | --pevent:secondary) _filedir '@(pevent|sb)'; return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--json --format --sample-type --no-offset --raw --lastip
				--exec-mode --no-pad --no-timing --no-cyc --no-sync --quiet --cpu --time --tcal
				--time-delta --no-tcal --no-wall-clock --keep-tcal-on-ovf --mtc-freq --nom-freq
				--cpuid-0x15.eax --cpuid-0x15.ebx --pevent:primary --pevent:secondary
				--pevent:sample-type --pevent:time-zero --pevent:time-shift --pevent:time-mult
				--pevent:tsc-offset --sb:compact --sb:offset --sb:time --help" -- "$cur"))
		else
			_filedir '@(pevent|pt)'
		fi
		;;
	import)
		case $prev in
		--vdso) _filedir; return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--json --vdso --help" -- "$cur"))
		else
			_filedir
		fi
		;;
	decode)
		case $prev in
		--pt) _filedir '@(pt|bin)'; return ;;
		--elf|--raw|--pevent:kcore|--pevent:vdso-x64|--pevent:vdso-x32|--pevent:vdso-ia32|--timeline)
			_filedir; return ;;
		--pevent:primary|--pevent:secondary) _filedir pevent; return ;;
		--pevent:sysroot|--sysroot) _filedir -d; return ;;
		--cpu) COMPREPLY=($(compgen -W "none" -- "$cur")); return ;;
		-J|--jobs) COMPREPLY=($(compgen -W "$(seq 1 $(nproc --all))" -- "$cur")); return ;;
		--mtc-freq|--nom-freq|--cpuid-0x15.eax|--cpuid-0x15.ebx|--chunk-size|--pevent:*)
			return ;;
		--filter:addr[0-3]_cfg) COMPREPLY=($(compgen -W "0 1 2" -- "$cur")); return ;;
		--filter:*) return ;;
		esac
		if [[ $cur != -* ]]; then
			_filedir -d
			return
		fi
		COMPREPLY=($(compgen -W "--pt --elf --raw --sysroot --cpu --mtc-freq --nom-freq
			--cpuid-0x15.eax --cpuid-0x15.ebx --pevent:primary --pevent:secondary
			--pevent:sample-type --pevent:time-zero --pevent:time-shift --pevent:time-mult
			--pevent:tsc-offset --pevent:kernel-start --pevent:sysroot --pevent:kcore
			--pevent:vdso-x64 --pevent:vdso-x32 --pevent:vdso-ia32 --insn --branches --calls
			--stats --timeline --json --att --time --offset --event:ip --event:time
			--event:tick --event:iflags --resync-on-error --insn:keep-tcal-on-ovf
			--filter:addr0_cfg --filter:addr0_a --filter:addr0_b --filter:addr1_cfg
			--filter:addr1_a --filter:addr1_b --filter:addr2_cfg --filter:addr2_a
			--filter:addr2_b --filter:addr3_cfg --filter:addr3_a --filter:addr3_b
			--jobs --chunk-size --quiet --help" -- "$cur"))
		__ltrim_colon_completions "$cur"
		;;
	report)
		case $prev in
		--pt) _filedir '@(pt|bin)'; return ;;
		--elf|--raw|--pevent:kcore|--pevent:vdso-x64|--pevent:vdso-x32|--pevent:vdso-ia32)
			_filedir; return ;;
		--pevent:primary|--pevent:secondary) _filedir pevent; return ;;
		--pevent:sysroot|--sysroot) _filedir -d; return ;;
		--cpu) COMPREPLY=($(compgen -W "none" -- "$cur")); return ;;
		--sort) COMPREPLY=($(compgen -W "calls self total p99 max insns" -- "$cur")); return ;;
		--weight|--clock) COMPREPLY=($(compgen -W "time insns" -- "$cur")); return ;;
		-J|--jobs) COMPREPLY=($(compgen -W "$(seq 1 $(nproc --all))" -- "$cur")); return ;;
		--top|--function|--outliers|--mtc-freq|--nom-freq|--cpuid-0x15.eax|--cpuid-0x15.ebx|\
		--chunk-size|--pevent:*)
			return ;;
		esac
		if [[ $cur != -* ]]; then
			_filedir -d
			return
		fi
		COMPREPLY=($(compgen -W "--sort --top --function --outliers --folded --weight --clock
			--per-thread --per-stream --json --pt --elf --raw --sysroot --cpu --mtc-freq --nom-freq
			--cpuid-0x15.eax --cpuid-0x15.ebx --pevent:primary --pevent:secondary
			--pevent:sample-type --pevent:time-zero --pevent:time-shift --pevent:time-mult
			--pevent:tsc-offset --pevent:kernel-start --pevent:sysroot --pevent:kcore
			--pevent:vdso-x64 --pevent:vdso-x32 --pevent:vdso-ia32 --jobs --chunk-size --quiet
			--help" -- "$cur"))
		__ltrim_colon_completions "$cur"
		;;
	symbols)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--json --help" -- "$cur"))
		else
			_filedir
		fi
		;;
	record)
		# After "--" everything belongs to the workload.
		for ((i = 1; i < cword; i++)); do
			if [[ ${words[i]} == -- ]]; then
				_command_offset $((i + 1))
				return
			fi
		done
		case $prev in
		-e|--event)
			local pre=${cur%/*} terms t
			if [[ $cur == intel_pt/* ]]; then
				terms=$(_ptcollect_pmu_terms)
				local base=${cur%[,/]*}
				[[ $cur == */*/* ]] && { COMPREPLY=($(compgen -W "${pre}/u ${pre}/k ${pre}/uk" -- "$cur")); return; }
				COMPREPLY=()
				for t in $terms; do COMPREPLY+=("$base${cur:${#base}:1}$t"); done
				COMPREPLY=($(compgen -W "${COMPREPLY[*]}" -- "$cur"))
			else
				COMPREPLY=($(compgen -W "intel_pt//u intel_pt//k intel_pt//uk intel_pt/" -- "$cur"))
			fi
			compopt -o nospace
			return ;;
		-p|--pid|-t|--tid)
			COMPREPLY=($(compgen -W "$(command ls /proc | grep -E '^[0-9]+$')" -- "$cur"))
			return ;;
		-C|--cpu)
			COMPREPLY=($(compgen -W "$(seq 0 $(($(nproc --all) - 1)))" -- "$cur"))
			return ;;
		-o|--output)
			_filedir -d
			return ;;
		--user)
			COMPREPLY=($(compgen -u -- "$cur"))
			return ;;
		--filter)
			_ptcollect_filter
			return ;;
		--trigger)
			_ptcollect_trigger
			return ;;
		--control)
			COMPREPLY=($(compgen -W "fifo: fd:" -- "$cur"))
			compopt -o nospace
			return ;;
		--ready)
			_filedir
			return ;;
		-m|--mmap-pages|--duration|--max-size|--trigger-count)
			return ;;
		esac
		COMPREPLY=($(compgen -W "--event --pid --tid --all-cpus --cpu --mmap-pages
			--output --force --quiet --per-thread --filter --duration --max-size
			--kcore --archive --user --dry-run --json --help --snapshot --no-final-snapshot --trigger
			--trigger-count --control --ready --no-trace --" -- "$cur"))
		;;
	esac
} &&
	complete -F _ptcollect ptcollect
