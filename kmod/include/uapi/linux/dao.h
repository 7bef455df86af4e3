/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dao.h - the user-space interface of dao.ko: the ioctls of /dev/dao and the
 * generic netlink family "dao". Documentation/kmod.md and
 * Documentation/netlink.md describe every command, field and error.
 *
 * Every ioctl argument starts with its own size (argsz) and flags and holds
 * only naturally aligned __u32/__u64 fields with no implicit padding, so the
 * layout is the same for 32- and 64-bit callers and a struct can grow at its
 * end: the module accepts a larger argsz when the bytes it does not know are
 * zero, and a caller may pass an older, smaller argsz down to the size of the
 * first version of the struct (DAO_IOC_*_SIZE_V1).
 */
#ifndef _UAPI_LINUX_DAO_H
#define _UAPI_LINUX_DAO_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DAO_DEVICE_NAME "dao"
#define DAO_DEVICE_PATH "/dev/dao"

/* Incremented only for incompatible changes; additions are features. */
#define DAO_IOC_ABI_VERSION 1

/* The ioctl numbers carry no size: the size travels in argsz. */
#define DAO_IOC_MAGIC 0xDA

/* Feature bits reported by DAO_IOC_VERSION. */
#define DAO_FEAT_PIN (1ULL << 0)     /* DAO_IOC_PIN and DAO_IOC_UNPIN */
#define DAO_FEAT_STATS (1ULL << 1)   /* DAO_IOC_STATS */
#define DAO_FEAT_NETLINK (1ULL << 2) /* the generic netlink family "dao" */
#define DAO_FEAT_ALL (DAO_FEAT_PIN | DAO_FEAT_STATS | DAO_FEAT_NETLINK)

/*
 * DAO_IOC_VERSION: what this module speaks.
 * in:  argsz, flags (must be 0), reserved (must be 0)
 * out: abi_version, page_size, features
 */
struct dao_ioc_version {
	__u32 argsz;
	__u32 flags;
	__u32 abi_version;
	__u32 page_size;
	__u64 features;
	__u64 reserved;
};
#define DAO_IOC_VERSION_SIZE_V1 32
#define DAO_IOC_VERSION _IO(DAO_IOC_MAGIC, 0x00)

/* Flags of struct dao_ioc_pin. */
#define DAO_PIN_WRITE (1U << 0) /* the device will write the range */
#define DAO_PIN_FLAGS_ALL (DAO_PIN_WRITE)

/*
 * DAO_IOC_PIN: pin [addr, addr + length) of the caller's memory.
 * in:  argsz, flags (DAO_PIN_*), addr and length (page aligned, length > 0)
 * out: handle (non-zero, for DAO_IOC_UNPIN), charged (bytes charged to the
 *      node, the process and RLIMIT_MEMLOCK)
 */
struct dao_ioc_pin {
	__u32 argsz;
	__u32 flags;
	__u64 addr;
	__u64 length;
	__u64 handle;
	__u64 charged;
};
#define DAO_IOC_PIN_SIZE_V1 40
#define DAO_IOC_PIN _IO(DAO_IOC_MAGIC, 0x01)

/*
 * DAO_IOC_UNPIN: release one pinned range and its charges.
 * in:  argsz, flags (must be 0), handle (from DAO_IOC_PIN on this fd)
 */
struct dao_ioc_unpin {
	__u32 argsz;
	__u32 flags;
	__u64 handle;
};
#define DAO_IOC_UNPIN_SIZE_V1 16
#define DAO_IOC_UNPIN _IO(DAO_IOC_MAGIC, 0x02)

/*
 * DAO_IOC_STATS: this file's accounting.
 * in:  argsz, flags (must be 0)
 * out: everything else
 */
struct dao_ioc_stats {
	__u32 argsz;
	__u32 flags;
	__u64 pinned_bytes; /* now */
	__u64 regions;      /* ranges pinned now */
	__u64 peak_bytes;   /* highest pinned_bytes since open */
	__u64 refused;      /* pins refused by the node limit or RLIMIT_MEMLOCK */
};
#define DAO_IOC_STATS_SIZE_V1 40
#define DAO_IOC_STATS _IO(DAO_IOC_MAGIC, 0x03)

/* ------------------------------------------------ generic netlink "dao" */

#define DAO_GENL_NAME "dao"
#define DAO_GENL_VERSION 1
#define DAO_GENL_MCGRP_EVENTS "events"

enum dao_nl_cmd {
	DAO_NL_CMD_UNSPEC,
	DAO_NL_CMD_GET_NODE,     /* do: node state */
	DAO_NL_CMD_GET_PROC,     /* dump: one message per process */
	DAO_NL_CMD_SET_LIMIT,    /* do, CAP_NET_ADMIN: DAO_NL_A_NODE_LIMIT */
	DAO_NL_CMD_PIN_REFUSED,  /* event: a pin refused by the node limit */
	DAO_NL_CMD_PROC_RELEASE, /* event: a file's pins released at close */

	__DAO_NL_CMD_MAX,
	DAO_NL_CMD_MAX = __DAO_NL_CMD_MAX - 1
};

enum dao_nl_attr {
	DAO_NL_A_UNSPEC,
	DAO_NL_A_PAD,            /* alignment of the 64-bit attributes */
	DAO_NL_A_NODE_LIMIT,     /* u64: node limit in bytes */
	DAO_NL_A_NODE_PINNED,    /* u64: bytes pinned on the node now */
	DAO_NL_A_NODE_PEAK,      /* u64: highest NODE_PINNED since load */
	DAO_NL_A_NODE_PROCS,     /* u32: processes with /dev/dao open */
	DAO_NL_A_NODE_REFUSED,   /* u64: pins refused since load */
	DAO_NL_A_PROC_PID,       /* u32: tgid in the receiver's pid namespace */
	DAO_NL_A_PROC_COMM,      /* string: command name at open */
	DAO_NL_A_PROC_UID,       /* u32: uid in the receiver's user namespace */
	DAO_NL_A_PROC_PINNED,    /* u64: bytes the process pins now */
	DAO_NL_A_PROC_REGIONS,   /* u64: ranges the process pins now */
	DAO_NL_A_PROC_PEAK,      /* u64: highest PROC_PINNED */
	DAO_NL_A_PROC_REFUSED,   /* u64: pins of the process refused */
	DAO_NL_A_EVENT_BYTES,    /* u64: bytes asked (refused) or released */
	DAO_NL_A_EVENT_REGIONS,  /* u64: ranges released */
	DAO_NL_A_PROC_ORPHANED,  /* flag: every file of the process outlived
				  * its owner's address space; PROC_PID is 0 */

	__DAO_NL_A_MAX,
	DAO_NL_A_MAX = __DAO_NL_A_MAX - 1
};

#endif /* _UAPI_LINUX_DAO_H */
