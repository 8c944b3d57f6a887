// SPDX-License-Identifier: GPL-2.0
/*
 * fs_param: asks a file system type to parse mount options, and mounts
 * nothing: each option goes to a fresh context from fsopen(), with
 * fsconfig() (the mount API's calls).
 *
 *   fs_param TYPE KEY=VALUE...
 *
 * Prints one line per option: "KEY=VALUE ok", or "KEY=VALUE error NAME:
 * MESSAGE", NAME the errno's (EINVAL, ...) and MESSAGE what the file
 * system logged on the context (e.g. "e NFS: Unrecognized transport
 * protocol").  Exits 0 if every option was accepted, 1 if one was
 * refused, 2 on a usage error or when TYPE cannot be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/* The messages the file system left on the context, on one line. */
static void print_log(int fd)
{
	char msg[512];
	ssize_t n;

	while ((n = read(fd, msg, sizeof(msg) - 1)) > 0) {
		msg[n] = '\0';
		msg[strcspn(msg, "\n")] = '\0';
		printf(" %s", msg);
	}
}

static int try_option(const char *type, char *opt)
{
	char *eq = strchr(opt, '=');
	int fd, ret;

	if (!eq) {
		fprintf(stderr, "fs_param: %s: not KEY=VALUE\n", opt);
		return 2;
	}
	fd = fsopen(type, FSOPEN_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fs_param: fsopen(%s): %s\n", type, strerror(errno));
		return 2;
	}
	*eq = '\0';
	ret = fsconfig(fd, FSCONFIG_SET_STRING, opt, eq + 1, 0);
	*eq = '=';
	if (ret == 0) {
		printf("%s ok\n", opt);
	} else {
		printf("%s error %s:", opt, strerrorname_np(errno));
		print_log(fd);
		printf("\n");
	}
	close(fd);
	return ret == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int i, ret, worst = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: fs_param TYPE KEY=VALUE...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		ret = try_option(argv[1], argv[i]);
		if (ret == 2)
			return 2;
		if (ret > worst)
			worst = ret;
	}
	return worst;
}
