/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdp_ktest.h: the debugfs folder of an in-kernel test module, with its
 * command files and text files, for the modules under userspace-tests/.
 * Everything here is static: each module that includes it has its own
 * copy, with its own folder, and THIS_MODULE names that module.
 *
 * A command file: a write of one line (shorter than the command's size)
 * is copied in, white space is stripped from both ends and the command
 * runs on it under the command's mutex; the write returns count, or the
 * command's negative errno.  While the mutex is held, a write waits for
 * it, or fails with -EBUSY if the command says so (one run at a time).
 *
 * A text file: a read gives the text, under the text's mutex; a text
 * with an update callback is written again first, under that mutex.
 *
 * An open file holds a reference to its module (.owner below), so no
 * write or read is going on when the module's exit runs.
 */
#ifndef SDP_KTEST_H
#define SDP_KTEST_H

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "sdp_compat.h"	/* (sdp.ko's: the kernels' differences) */

/**
 * struct sdp_ktest_cmd - what a write to a command file does
 * @run: runs the command line; 0 or a negative errno
 * @lock: held while @run runs
 * @size: the buffer of the command line: it takes size - 1 bytes at most
 * @busy: fail with -EBUSY rather than wait while @lock is held
 */
struct sdp_ktest_cmd {
	int		(*run)(const char *cmd);
	struct mutex	*lock;	/* one command at a time */
	size_t		size;
	bool		busy;
};

/**
 * struct sdp_ktest_text - what a read of a text file gives
 * @buf: a NUL-terminated text of @size bytes at most, under @lock
 * @size: the size of @buf
 * @lock: held while @buf is written (by the module) and read
 * @update: if set, writes @buf again before each read, under @lock
 */
struct sdp_ktest_text {
	char		*buf;
	size_t		size;
	struct mutex	*lock;	/* guards @buf */
	void		(*update)(char *buf, size_t size);
};

/**
 * struct sdp_ktest_file - one file of the folder
 * @name: its name
 * @cmd: a command file, or
 * @text: a text file
 */
struct sdp_ktest_file {
	const char		*name;
	struct sdp_ktest_cmd	*cmd;
	struct sdp_ktest_text	*text;
};

static struct dentry *sdp_ktest_dir;

/* (simple_open set file->private_data to the file's sdp_ktest_cmd) */
static ssize_t sdp_ktest_cmd_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct sdp_ktest_cmd *cmd = file->private_data;
	char *line;
	int ret;

	if (!count || count >= cmd->size)
		return -EINVAL;
	line = memdup_user_nul(ubuf, count);
	if (IS_ERR(line))
		return PTR_ERR(line);

	if (!cmd->busy) {
		mutex_lock(cmd->lock);
	} else if (!mutex_trylock(cmd->lock)) {
		kfree(line);
		return -EBUSY;
	}
	ret = cmd->run(strim(line));
	mutex_unlock(cmd->lock);
	kfree(line);
	return ret ? ret : count;
}

static ssize_t sdp_ktest_text_read(struct file *file, char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct sdp_ktest_text *text = file->private_data;
	ssize_t ret;

	mutex_lock(text->lock);
	if (text->update)
		text->update(text->buf, text->size);
	ret = simple_read_from_buffer(ubuf, count, ppos, text->buf,
				      strnlen(text->buf, text->size));
	mutex_unlock(text->lock);
	return ret;
}

static const struct file_operations sdp_ktest_cmd_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= sdp_ktest_cmd_write,
};

static const struct file_operations sdp_ktest_text_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= sdp_ktest_text_read,
	.llseek	= default_llseek,
};

/* The folder @name in debugfs, with @n @files: 0 or a negative errno. */
static int sdp_ktest_init(const char *name, const struct sdp_ktest_file *files,
			  size_t n)
{
	size_t i;

	sdp_ktest_dir = debugfs_create_dir(name, NULL);
	if (IS_ERR(sdp_ktest_dir))
		return PTR_ERR(sdp_ktest_dir);
	for (i = 0; i < n; i++) {
		if (files[i].cmd)
			debugfs_create_file(files[i].name, 0200, sdp_ktest_dir,
					    files[i].cmd, &sdp_ktest_cmd_fops);
		else
			debugfs_create_file(files[i].name, 0444, sdp_ktest_dir,
					    files[i].text, &sdp_ktest_text_fops);
	}
	return 0;
}

static void sdp_ktest_exit(void)
{
	debugfs_remove_recursive(sdp_ktest_dir);
}

#endif /* SDP_KTEST_H */
