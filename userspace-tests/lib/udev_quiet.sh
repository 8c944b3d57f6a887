# shellcheck shell=bash
# udev_quiet.sh: keeps udevd's workers off the CPU while a benchmark
# measures.  Every RPC client, transport and NFS mount the kernel makes
# appears in sysfs, and udevd ran its rules for those events in the middle
# of the timed runs: up to 60 ms of CPU in a 0.3 s kernel RPC run on the
# bed's two CPUs, and the runs it hit were 10% slower.  The events wait in
# udevd's queue until udev_resume.
#   udev_pause     stop running the events' workers
#   udev_resume    run them again, and what queued meanwhile

udev_pause() { udevadm control --stop-exec-queue 2>/dev/null || true; }
udev_resume() { udevadm control --start-exec-queue 2>/dev/null || true; }
