/* SPDX-License-Identifier: MIT */
/* memdbg-probe: the measuring half of `memdbg maps` and `memdbg compare`
 * (the memdbg command is a shell script; this is what it cannot do in sh).
 *
 *   memdbg-probe run [--dir DIR] [--signal SIG] [--sample-ms N] -- prog args   (default 5 ms)
 *   memdbg-probe pid PID
 *
 * run: starts prog as a ptrace child and watches it: samples the lines of
 * its /proc/PID/maps while it runs (the peak), takes a snapshot when it is
 * about to exit (PTRACE_EVENT_EXIT: after exit handlers and memdbg's leak
 * report, whatever the way out, a fatal signal included, while its memory
 * is still there) and, with --signal, each time it receives SIG (the
 * signal is then swallowed).  Snapshots go to DIR/snap-N.txt (key=value
 * lines, see snapshot.c) with DIR/maps-N.txt, and the run's summary to
 * DIR/run.txt.  Exits with the program's status (128+signal when killed).
 * pid: one snapshot of a running process to stdout.
 * Usage errors exit 2; a program that could not be started, 127. */
#define _GNU_SOURCE
#include "snapshot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *prog_name = "memdbg-probe";

static void usage(FILE *f)
{
	fprintf(f, "usage: %s run [--dir DIR] [--signal SIG] [--sample-ms N] -- program [args...]\n"
		   "       %s pid PID\n", prog_name, prog_name);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_signal(const char *s)
{
	char *end;
	long n;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	n = strtol(s, &end, 10);
	if (*s && !*end)
		return n > 0 && n < NSIG ? (int)n : -1;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);

		if (abbrev && !strcmp(abbrev, s))
			return sig;
	}
	return -1;
}

static void snapshot(const char *dir, int n, pid_t pid, const char *when)
{
	char path[4096], maps[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/snap-%d.txt", dir, n);
	snprintf(maps, sizeof(maps), "%s/maps-%d.txt", dir, n);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog_name, path, strerror(errno));
		return;
	}
	write_snapshot(pid, when, f, maps);
	fclose(f);
}

static int run(const char *dir, int snap_sig, long sample_ms, char **argv)
{
	struct maps_count peak = { 0, 0 }, c;
	struct rusage ru;
	int st, snaps = 0, exit_seen = 0;
	double t0 = now_s(), next_sample = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("memdbg-probe: fork");
		return 127;
	}
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", prog_name, argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "%s: the child did not stop for tracing\n", prog_name);
		return 127;
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL);
	ptrace(PTRACE_CONT, pid, 0, 0);

	for (;;) {
		pid_t r = wait4(pid, &st, WNOHANG | __WALL, &ru);

		if (r == 0) {
			/* Sample at most every sample_ms, and spend at most a
			 * third of the time reading maps (large maps files). */
			double t = now_s();

			if (t >= next_sample) {
				if (!count_maps(pid, &c)) {
					if (c.lines > peak.lines)
						peak.lines = c.lines;
					if (c.anon > peak.anon)
						peak.anon = c.anon;
				}
				double took = now_s() - t;
				next_sample = now_s() + (took * 2 > sample_ms / 1e3 ? took * 2 : sample_ms / 1e3);
			}
			struct timespec ts = { 0, 2 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			continue;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			perror("memdbg-probe: wait4");
			return 127;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), event = st >> 16, inject = 0;

		if (sig == SIGTRAP && event == PTRACE_EVENT_EXIT) {
			/* Memory is still mapped: the snapshot at exit, and
			 * a last peak sample (a program that dies fast). */
			if (!count_maps(pid, &c)) {
				if (c.lines > peak.lines)
					peak.lines = c.lines;
				if (c.anon > peak.anon)
					peak.anon = c.anon;
			}
			snapshot(dir, ++snaps, pid, "exit");
			exit_seen = 1;
		} else if (sig == SIGTRAP && event) {
			/* exec and other events: nothing to pass on */
		} else if (sig == snap_sig) {
			char when[64];

			snprintf(when, sizeof(when), "signal SIG%s", sigabbrev_np(sig));
			snapshot(dir, ++snaps, pid, when);
		} else {
			inject = sig;
		}
		ptrace(PTRACE_CONT, pid, 0, inject);
	}

	double wall = now_s() - t0;
	char path[4096];
	FILE *f;
	int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

	snprintf(path, sizeof(path), "%s/run.txt", dir);
	f = fopen(path, "w");
	if (f) {
		if (WIFEXITED(st))
			fprintf(f, "status=exit %d\nexit_code=%d\n", WEXITSTATUS(st), WEXITSTATUS(st));
		else
			fprintf(f, "status=signal SIG%s\nexit_code=%d\nterm_signal=SIG%s\n",
				sigabbrev_np(WTERMSIG(st)), status, sigabbrev_np(WTERMSIG(st)));
		fprintf(f, "peak_maps_lines=%ld\npeak_anon_vmas=%ld\npeak_rss_kb=%ld\n", peak.lines, peak.anon,
			ru.ru_maxrss);
		fprintf(f, "user_s=%.3f\nsys_s=%.3f\nwall_s=%.3f\nsnapshots=%d\nexit_snapshot=%d\n",
			ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, wall, snaps, exit_seen);
		fclose(f);
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *dir = ".";
	long sample_ms = 5;
	int snap_sig = 0, i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "pid")) {
		char *end;
		long pid;

		if (argc != 3 || (pid = strtol(argv[2], &end, 10)) <= 0 || *end) {
			usage(stderr);
			return 2;
		}
		if (kill((pid_t)pid, 0) && errno == ESRCH) {
			fprintf(stderr, "%s: no process %ld\n", prog_name, pid);
			return 1;
		}
		write_snapshot((pid_t)pid, "now", stdout, NULL);
		return 0;
	}
	if (strcmp(argv[1], "run")) {
		usage(stderr);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--signal") && i + 1 < argc) {
			snap_sig = parse_signal(argv[++i]);
			if (snap_sig < 0) {
				fprintf(stderr, "%s: unknown signal '%s'\n", prog_name, argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--sample-ms") && i + 1 < argc) {
			sample_ms = strtol(argv[++i], NULL, 10);
			if (sample_ms <= 0) {
				fprintf(stderr, "%s: --sample-ms needs a positive number\n", prog_name);
				return 2;
			}
		} else {
			break;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	return run(dir, snap_sig, sample_ms, argv + i);
}
