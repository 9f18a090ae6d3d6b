// SPDX-License-Identifier: MIT
/*
 * One writer of a bundle's manifest at a time: `archive` while `record` is
 * still writing is refused and the recording's final manifest stands; an
 * archive while another holds the bundle is refused, saying why; the
 * temporary file has a new name each time, created without following links,
 * so a link planted at the old fixed name (or anywhere) is never written
 * through and blocks nothing.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "manifest.h"
#include "run.h"
#include "suitewatch.h"

SUITEWATCH(watchdog, 60)

TestSuite(bundle_lock, .init = watchdog);

struct live {
	char dir[64], out[96], ctl[96], ack[96];
	pid_t pid;
	int ack_fd;
	int hold;		/* the workload's stdin: it lives until this end closes */
};

/* One line from ACK, within 5 s. */
static char *reply(struct live *l)
{
	return run_read_line(l->ack_fd, 5);
}

/*
 * record --no-trace into DIR/out, held by the control; returns once it says "ready". Its
 * workload (cat) lives until the control stops it or the test closes its stdin.
 */
static void live_start(struct live *l)
{
	char spec[256];
	int p[2];

	snprintf(l->dir, sizeof(l->dir), "/tmp/ptc-lock-XXXXXX");
	cr_assert(mkdtemp(l->dir));
	snprintf(l->out, sizeof(l->out), "%s/out", l->dir);
	snprintf(l->ctl, sizeof(l->ctl), "%s/ctl", l->dir);
	snprintf(l->ack, sizeof(l->ack), "%s/ack", l->dir);
	cr_assert_eq(mkfifo(l->ctl, 0600), 0);
	cr_assert_eq(mkfifo(l->ack, 0600), 0);
	snprintf(spec, sizeof(spec), "fifo:%s,%s", l->ctl, l->ack);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	l->hold = p[1];
	l->pid = fork();
	cr_assert_geq(l->pid, 0);
	if (!l->pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(p[0], 0);
		execl(run_bin(), "ptcollect", "record", "--no-trace", "-q", "-o", l->out,
		      "--control", spec, "--ready", "ack", "--", "cat", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	l->ack_fd = open(l->ack, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(l->ack_fd, 0);
	cr_assert_str_eq(reply(l), "ready");
}

static void live_stop(struct live *l)
{
	int fd = open(l->ctl, O_WRONLY | O_CLOEXEC), st;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "stop\n", 5), 5);
	close(fd);
	cr_expect_str_eq(reply(l), "ack");
	cr_assert_eq(waitpid(l->pid, &st, 0), l->pid);
	/* It exits as its workload did, here 128+SIGTERM. */
	cr_expect(WIFEXITED(st), "record was killed: %#x", st);
	close(l->ack_fd);
	close(l->hold);
}

static void live_remove(struct live *l)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", l->dir);
	cr_expect_eq(system(cmd), 0);
}

/* The manifest @dir holds, as read by ptcollect. */
static void read_back(const char *dir, struct manifest *m)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct error e = { 0 };

	cr_assert_geq(fd, 0);
	cr_assert_eq(manifest_read(fd, dir, m, &e), 0, "%s", e.why);
	close(fd);
}

static void refused_busy(const struct run_result *r, const char *dir)
{
	cr_expect_eq(r->status, 1, "%s", r->err);
	cr_expect(strstr(r->err, dir) && strstr(r->err, "another ptcollect is writing this bundle"),
		  "%s", r->err);
}

Test(bundle_lock, archive_while_record_writes_is_refused_and_the_final_manifest_stands)
{
	struct run_result r;
	struct manifest m;
	struct live l;

	live_start(&l);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", l.out, NULL), 0);
	refused_busy(&r, l.out);
	run_free(&r);
	live_stop(&l);
	read_back(l.out, &m);
	cr_expect(m.complete, "the recording's final manifest");
	cr_expect(m.stop_reason && *m.stop_reason, "with its stop reason");
	cr_expect_null(m.sysroot, "archive wrote nothing");
	manifest_free(&m);
	/* Once record has ended, archive runs. */
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", l.out, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	read_back(l.out, &m);
	cr_expect(m.complete && m.stop_reason);
	cr_expect_str_eq(m.sysroot, "sysroot");
	manifest_free(&m);
	live_remove(&l);
}

/* A finished --no-trace recording in DIR/out. */
static void recorded(struct live *l)
{
	struct run_result r;

	snprintf(l->dir, sizeof(l->dir), "/tmp/ptc-lock-XXXXXX");
	cr_assert(mkdtemp(l->dir));
	snprintf(l->out, sizeof(l->out), "%s/out", l->dir);
	cr_assert_eq(run_ptcollect(NULL, &r, "record", "--no-trace", "-q", "-o", l->out, "--",
				   "true", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
}

/* What an archive holds while it runs: the bundle's lock. A second archive is refused. */
Test(bundle_lock, a_second_writer_is_refused_while_the_first_holds_the_bundle)
{
	struct error e = { 0 };
	struct run_result r;
	struct manifest m;
	struct live l;
	int dfd, lock;

	recorded(&l);
	dfd = open(l.out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(dfd, 0);
	lock = manifest_lock(dfd, l.out, &e);
	cr_assert_geq(lock, 0, "%s", e.why);
	cr_assert_eq(manifest_lock(dfd, l.out, &e), -EBUSY, "one holder at a time");
	cr_expect(strstr(e.why, "another ptcollect is writing this bundle"), "%s", e.why);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", l.out, NULL), 0);
	refused_busy(&r, l.out);
	run_free(&r);
	close(lock);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", l.out, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	read_back(l.out, &m);
	cr_expect(m.complete);
	manifest_free(&m);
	close(dfd);
	live_remove(&l);
}

/* Two archives started together: each ends archived or refused as busy, never another way. */
Test(bundle_lock, two_archives_at_once_end_done_or_refused_as_busy)
{
	char *argv[] = { (char *)run_bin(), "archive", NULL, NULL };
	struct run_result r[2];
	struct manifest m;
	struct live l;
	pid_t pid;

	recorded(&l);
	argv[2] = l.out;
	for (int round = 0; round < 5; round++) {
		int st;

		pid = fork();
		cr_assert_geq(pid, 0);
		if (!pid) {
			struct run_result c;

			run_argv(argv, NULL, &c);
			_exit(c.status == 0 ? 0 : strstr(c.err, "another ptcollect is writing") ?
			      3 : 1);
		}
		cr_assert_eq(run_argv(argv, NULL, &r[0]), 0);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_expect(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3),
			  "the other archive: %#x", st);
		cr_expect(r[0].status == 0 || strstr(r[0].err, "another ptcollect is writing"),
			  "%s", r[0].err);
		run_free(&r[0]);
		read_back(l.out, &m);
		cr_expect(m.complete && m.stop_reason && m.sysroot);
		manifest_free(&m);
	}
	(void)r[1];
	live_remove(&l);
}

/* Files named as a manifest's temporary, the planted link at the old fixed name aside. */
static int temporaries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	cr_assert(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, ".manifest.json.", 15) &&
		     strcmp(de->d_name, ".manifest.json.tmp");
	closedir(d);
	return n;
}

Test(bundle_lock, a_planted_link_at_the_old_temporary_name_is_never_written_through)
{
	char link[160], target[96];
	struct run_result r;
	struct manifest m;
	struct stat st;
	struct live l;
	int fd;

	recorded(&l);
	snprintf(target, sizeof(target), "%s/victim", l.dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "victim\n", 7), 7);
	close(fd);
	snprintf(link, sizeof(link), "%s/.manifest.json.tmp", l.out);
	cr_assert_eq(symlink(target, link), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(run_ptcollect(NULL, &r, "archive", l.out, NULL), 0);
		cr_expect_eq(r.status, 0, "archive %d: %s", i, r.err);
		run_free(&r);
	}
	cr_assert_eq(lstat(link, &st), 0);
	cr_expect(S_ISLNK(st.st_mode), "the link is left as it was");
	cr_assert_eq(stat(target, &st), 0);
	cr_expect_eq(st.st_size, 7, "the file it points to is untouched");
	read_back(l.out, &m);
	cr_expect(m.complete && m.sysroot);
	manifest_free(&m);
	cr_expect_eq(temporaries(l.out), 0, "no temporary file is left behind");
	live_remove(&l);
}
