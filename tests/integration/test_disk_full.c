// SPDX-License-Identifier: MIT
/*
 * A small disk: record keeps room for its last manifest, sized from what
 * that manifest can grow to, or refuses before tracing, naming the room
 * needed and the room free. A disk that fills while recording still gets
 * the last manifest, complete, with its stop reason. Each case runs in a
 * mount namespace of its own on a small tmpfs (root only; skipped else).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "suitewatch.h"

SUITEWATCH(watchdog, 60)

TestSuite(disk_full, .init = watchdog);

/*
 * Run @script with sh in a new mount namespace, with $B (ptcollect), $T
 * (trigtarget) and $M (a tmpfs of @size mounted there) set.
 */
static void in_tmpfs(const char *size, const char *script, struct run_result *r)
{
	char dir[] = "/tmp/ptc-disk-XXXXXX", *full, *prog = run_testprog("trigtarget");
	char *argv[] = { "unshare", "-m", "sh", "-c", NULL, NULL };

	if (geteuid())
		cr_skip_test("a tmpfs needs root");
	cr_assert(mkdtemp(dir));
	cr_assert(asprintf(&full, "set -u; B='%s'; T='%s'; M='%s'; "
			   "mount -t tmpfs -o size=%s ptc-test \"$M\" || exit 99; %s",
			   run_bin(), prog, dir, size, script) > 0);
	argv[4] = full;
	cr_assert_eq(run_argv(argv, NULL, r), 0);
	if (r->status == 99)
		cr_skip_test("unshare -m or mount failed: %s", r->err);
	rmdir(dir);
	free(full);
	free(prog);
}

Test(disk_full, too_little_room_for_the_last_manifest_is_refused_before_tracing)
{
	struct run_result r;

	in_tmpfs("8k", "$B record --no-trace -o \"$M/b\" -- true; echo \"rc=$?\"; "
		 "ls -A \"$M\"", &r);
	cr_expect(strstr(r.out, "rc=1\n"), "%s", r.out);
	cr_expect(!strstr(r.out, "\nb\n"), "no bundle is left: %s", r.out);
	cr_expect(strstr(r.err, "the last manifest needs") && strstr(r.err, "bytes free: nothing "
		  "was recorded") && strstr(r.err, "/b"), "%s", r.err);
	run_free(&r);
}

/* Every fire a trigger may list needs its room: without --trigger-count 100000 of them. */
Test(disk_full, the_room_kept_counts_the_fires_the_triggers_allow)
{
	struct run_result r;

	in_tmpfs("1m", "$B record -q --no-trace --trigger \"uprobe:$T:trig_hit=mark\" -o \"$M/b\" "
		 "-- \"$T\" --no-wait 5; echo \"rc=$?\"; "
		 "$B record -q --no-trace --trigger \"uprobe:$T:trig_hit=mark\" --trigger-count 20 "
		 "-o \"$M/c\" -- \"$T\" --no-wait 5; echo \"rc2=$?\"", &r);
	cr_expect(strstr(r.out, "rc=1\n"), "%s", r.out);
	cr_expect(strstr(r.err, "the last manifest needs"), "%s",
		  r.err);
	cr_expect(strstr(r.out, "rc2=0\n"), "20 fires fit: %s %s", r.out, r.err);
	run_free(&r);
}

/*
 * The disk fills while recording (a file written until ENOSPC); the end
 * still writes the last manifest: complete, the stop reason, the summary.
 */
Test(disk_full, a_disk_that_fills_while_recording_still_gets_the_last_manifest)
{
	struct run_result r;

	in_tmpfs("256k",
		 "C=\"$M/ctl\"; A=\"$M/ack\"; H=\"$M/hold\"; "
		 "mkfifo \"$C\" \"$A\" \"$H\" || exit 98; "
		 "$B record --no-trace -o \"$M/b\" --control \"fifo:$C,$A\" --ready ack "
		 "-- cat \"$H\" & "
		 "exec 5<>\"$H\" 3<\"$A\"; read -r line <&3; echo \"first=$line\"; "
		 "dd if=/dev/zero of=\"$M/fill\" bs=4096 2>/dev/null; echo \"dd=$?\"; "
		 "echo stop >\"$C\"; read -r line <&3; echo \"then=$line\"; wait $!; "
		 "echo \"rc=$?\"; $B info --json \"$M/b\" | grep -E '\"(complete|stop_reason)\"'",
		 &r);
	cr_expect(strstr(r.out, "first=ready\n") && strstr(r.out, "dd=1\n"), "%s", r.out);
	cr_expect(strstr(r.out, "then=ack\n"), "%s", r.out);
	cr_expect(strstr(r.out, "\"complete\": true"), "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.out, "\"stop_reason\": \"control: stop\"") ||
		  strstr(r.out, "\"stop_reason\": \""), "%s", r.out);
	cr_expect(strstr(r.err, "no trace (--no-trace), in"), "the summary: %s", r.err);
	run_free(&r);
}
