# ptsim_check accepts a real capture and rejects a wrong start or one changed byte.
. /lib.sh
/ptsim_test -t 0.5 -w cap.pt >/dev/null || fail check_tool_capture "ptsim_test -w failed"
/ptsim_check cap.pt && pass check_tool_accepts_capture || fail check_tool_accepts_capture "rejected a clean capture"
/ptsim_check cap.pt 1 >/dev/null 2>&1 && fail check_tool_rejects_wrong_start "accepted START 1" \
	|| pass check_tool_rejects_wrong_start
b=$(dd if=cap.pt bs=1 skip=1000 count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
# shellcheck disable=SC2059 # the format is the escaped byte
printf "$(printf '\\%03o' $((255 - b)))" | dd of=cap.pt bs=1 seek=1000 conv=notrunc 2>/dev/null
/ptsim_check cap.pt >bad.txt 2>&1
rc=$?
cat bad.txt
[ $rc = 1 ] && grep -q 'file offset 0x3e8' bad.txt && pass check_tool_names_changed_byte \
	|| fail check_tool_names_changed_byte "exit $rc, expected 1 and the offset 0x3e8 named"
: >empty.pt
/ptsim_check empty.pt >/dev/null && pass check_tool_empty_file_passes \
	|| fail check_tool_empty_file_passes "an empty capture (a CPU that traced nothing) was rejected"
