# bash completion for ptcollect                            -*- shell-script -*-

_ptcollect_pmu_terms()
{
	local d=${PTCOLLECT_SYSFS:-/sys}/bus/event_source/devices/intel_pt/format
	[[ -d $d ]] && command ls "$d" 2>/dev/null
	echo config config1 config2
}

# --filter 'ACTION SYM [/ END] [@ FILE], ...': actions, function names of the
# @FILE already typed (else of the workload after "--", else of -p PID's
# executable) through `ptcollect symbols --names FILE 'PREFIX*'`, and files
# after "@". $1 is the text readline completes, $2 the ptcollect command.
_ptcollect_filter()
{
	local text=$1 ptc=$2 line=${COMP_LINE:0:COMP_POINT}
	local spec=${line##*--filter[ =]} tok=${text##*[ ,@/]} head before file w pw i
	head=${text:0:${#text}-${#tok}}
	spec=${spec#[\'\"]}
	before=${spec:0:${#spec}-${#tok}}
	before=${before%"${before##*[! ]}"}
	if [[ $spec == *@* ]]; then
		file=${spec##*@}
		file=${file#"${file%%[! ]*}"}
		if [[ $file != *[\ ,]* ]]; then
			head=${text:0:${#text}-${#file}}
			COMPREPLY=($(compgen -f -- "$file"))
			COMPREPLY=("${COMPREPLY[@]/#/$head}")
			compopt -o nospace 2>/dev/null
			return
		fi
		file=""
	fi
	w=${before##*[ ,]}
	pw=${before:0:${#before}-${#w}}
	pw=${pw%"${pw##*[! ]}"}
	if [[ -z $before || $before == *, || $w == @* || $pw == *@ ]]; then
		COMPREPLY=($(compgen -W "filter tracestop stop" -- "$tok"))
		COMPREPLY=("${COMPREPLY[@]/#/$head}")
		compopt -o nospace 2>/dev/null
		COMPREPLY=("${COMPREPLY[@]/%/ }")
		return
	fi
	case $w in
	filter|stop|tracestop|start|*/|/) ;;
	*) return ;;
	esac
	if [[ $spec == *@* ]]; then
		file=${spec##*@}; file=${file# }; file=${file%%[ ,]*}
	fi
	for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
		[[ -n $file ]] && break
		[[ ${COMP_WORDS[i]} == -- ]] && file=${COMP_WORDS[i + 1]}
		[[ ${COMP_WORDS[i]} == -p || ${COMP_WORDS[i]} == --pid ]] &&
			file=/proc/${COMP_WORDS[i + 1]%%,*}/exe
	done
	[[ -n $file && $file != */* ]] && file=$(type -P "$file")
	[[ -z $file ]] && return
	COMPREPLY=($(compgen -W "$("$ptc" symbols --names "$file" "$tok*" 2>/dev/null)" \
		-- "$tok"))
	COMPREPLY=("${COMPREPLY[@]/#/$head}")
}

_ptcollect()
{
	local cur prev words cword
	_init_completion || return

	local cmds="record caps symbols help"
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
	symbols)
		# FILE, then a GLOB: the file's function names (ptcollect symbols --names).
		local args=() w
		for ((i = 2; i < cword; i++)); do
			[[ ${words[i]} == -* ]] || args+=("${words[i]}")
		done
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--names --json --help" -- "$cur"))
		elif ((${#args[@]} == 0)); then
			_filedir
		elif ((${#args[@]} == 1)); then
			COMPREPLY=($(compgen -W "$("${words[0]}" symbols --names "${args[0]}" \
				"$cur*" 2>/dev/null)" -- "$cur"))
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
		-m|--mmap-pages|--duration|--max-size)
			return ;;
		esac
		if [[ ${COMP_LINE:0:COMP_POINT} == *--filter[\ =]* &&
		      ${COMP_LINE:0:COMP_POINT} =~ --filter[\ =][\'\"][^\'\"]*$ || $prev == --filter ]]; then
			_ptcollect_filter "$2" "${COMP_WORDS[0]}"
			return
		fi
		COMPREPLY=($(compgen -W "--event --pid --tid --all-cpus --cpu --mmap-pages
			--output --force --quiet --per-thread --filter --duration --max-size
			--dry-run --json --help --" -- "$cur"))
		;;
	esac
} &&
	complete -F _ptcollect ptcollect
