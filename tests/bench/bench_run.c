/* SPDX-License-Identifier: MIT */
/* bench-run: runs one command of tests/bench-real.sh and measures it.
 *
 *   bench-run [--out FILE] [--timeout S] [--sample-ms N] [--stuck S] -- program [args...]
 *
 * Once the program has ended, writes one line of key=value pairs to FILE
 * (default: stdout, shared with the program's):
 *   status=ok|exit_N|SIGNAME|timeout|stuck cpu_s user_s sys_s wall_s
 *   maxrss_kb peak_maps peak_pss_kb
 * The program's own exit status is in status=; bench-run exits 0 unless
 * it could not measure (2).
 *
 * Why a program of its own rather than GNU time or memdbg-probe:
 * - the whole process tree counts (gcc runs cc1 and as, valgrind and the
 *   shell wrappers exec or fork): the program runs in a process group of
 *   its own, bench-run is a child subreaper (orphans, and the children of
 *   a parent killed at the timeout, come back to it and are reaped), and
 *   CPU time and peak RSS are getrusage(RUSAGE_CHILDREN) once every
 *   process is reaped: the sum of all CPU times, the largest process's
 *   RSS; the maps sampler looks at every process of the group;
 * - peak_pss_kb, the largest Pss (/proc/PID/smaps_rollup) of a process of
 *   the group seen by the sampler: RSS counts a file page once per
 *   address that maps it, so memdbg's compact mode (many addresses, one
 *   page) shows only in Pss.  A sample, not a high-water mark: it misses
 *   what the last interval before exit added;
 * - no ptrace, which would slow the debuggers that fault a lot;
 * - the timeout kills the whole group, and a run whose largest process
 *   sits at vm.max_map_count without change for --stuck seconds (how
 *   Electric Fence and DUMA "hang" once mmap fails) is ended early and
 *   reported as "stuck" instead of eating the whole timeout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Lines of /proc/PID/maps, or -1 when the process is gone. */
static long maps_lines(pid_t pid)
{
	char path[64], buf[65536];
	long lines = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

/* Pss of PID in kB from /proc/PID/smaps_rollup, or -1. */
static long pss_kb(const char *pid)
{
	char path[300], buf[4096], *p;
	ssize_t n;
	long kb = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/smaps_rollup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "\nPss:");
	if (p)
		sscanf(p + 5, "%ld", &kb);
	return kb;
}

/* Process group of PID from /proc/PID/stat (field 5), or -1. */
static pid_t pgrp_of(const char *pid)
{
	char path[300], buf[512], *p;
	ssize_t n;
	int fd, pgrp;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the command name may hold anything */
	if (!p || sscanf(p + 1, " %*c %*d %d", &pgrp) != 1)
		return -1;
	return pgrp;
}

/* The largest maps line count among the processes of group PGRP; the
 * largest Pss of them into *PSS when it is larger. */
static long sample_group(pid_t pgrp, long *pss)
{
	struct dirent *de;
	long best = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		long l, kb;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (pgrp_of(de->d_name) != pgrp)
			continue;
		l = maps_lines(atoi(de->d_name));
		if (l > best)
			best = l;
		kb = pss_kb(de->d_name);
		if (kb > *pss)
			*pss = kb;
	}
	closedir(d);
	return best;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-run [--out FILE] [--timeout S] [--sample-ms N] [--stuck S] -- program [args...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double timeout = 300, stuck_s = 10, sample_ms = 20, t0, last_change, wall;
	long max_map = 65530, peak = 0, last = -1, peak_pss = -1;
	struct rusage ru;
	const char *why = NULL, *out = NULL;
	int i, st = 0;
	char status[64];
	FILE *f;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") ) {
			i++;
			break;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--timeout"))
			timeout = atof(argv[++i]);
		else if (!strcmp(argv[i], "--sample-ms"))
			sample_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--out"))
			out = argv[++i];
		else if (!strcmp(argv[i], "--stuck"))
			stuck_s = atof(argv[++i]);
		else
			usage();
	}
	if (i >= argc)
		usage();
	f = fopen("/proc/sys/vm/max_map_count", "r");
	if (f) {
		if (fscanf(f, "%ld", &max_map) != 1)
			max_map = 65530;
		fclose(f);
	}

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		perror("bench-run: PR_SET_CHILD_SUBREAPER (children of killed processes are not counted)");
	t0 = now_s();
	pid = fork();
	if (pid < 0) {
		perror("bench-run: fork");
		return 2;
	}
	if (pid == 0) {
		setpgid(0, 0);
		execvp(argv[i], argv + i);
		fprintf(stderr, "bench-run: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);	/* both sides, whichever runs first */
	last_change = t0;
	for (;;) {
		double t, took;
		pid_t r = wait4(pid, &st, WNOHANG, &ru);
		long l;

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			perror("bench-run: wait4");
			return 2;
		}
		t = now_s();
		l = sample_group(pid, &peak_pss);
		took = now_s() - t;
		if (l > peak)
			peak = l;
		if (l != last) {
			last = l;
			last_change = t;
		}
		if (t - t0 > timeout)
			why = "timeout";
		else if (l >= max_map - 16 && t - last_change > stuck_s)
			why = "stuck";
		if (why) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			wait4(pid, &st, 0, &ru);
			break;
		}
		/* Reading a 65k-line maps file, or the Pss of a process with
		 * a million mapped pages, takes milliseconds: sample less
		 * often then, so the sampler stays a small share of the
		 * second CPU (but at least 4 times a second). */
		took *= 4e3;
		if (took > 250)
			took = 250;
		usleep((useconds_t)((took > sample_ms ? took : sample_ms) * 1000));
	}
	wall = now_s() - t0;
	kill(-pid, SIGKILL);	/* stragglers of the group (daemonized children) */
	/* Reap what is left (orphans reparented to us), so that their CPU
	 * time and RSS are in RUSAGE_CHILDREN. */
	while (wait4(-1, NULL, __WALL, NULL) > 0 || errno == EINTR)
		;
	getrusage(RUSAGE_CHILDREN, &ru);
	if (why)
		snprintf(status, sizeof(status), "%s", why);
	else if (WIFEXITED(st))
		snprintf(status, sizeof(status), WEXITSTATUS(st) ? "exit_%d" : "ok", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(status, sizeof(status), "SIG%s", sigabbrev_np(WTERMSIG(st)) ?: "?");
	else
		snprintf(status, sizeof(status), "unknown");
	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		return 2;
	}
	fprintf(f, "status=%s cpu_s=%.3f user_s=%.3f sys_s=%.3f wall_s=%.3f maxrss_kb=%ld peak_maps=%ld peak_pss_kb=%ld\n",
		status, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
		wall, ru.ru_maxrss, peak, peak_pss);
	fclose(f);
	return 0;
}
