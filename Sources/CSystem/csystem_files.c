/* CSystem: files and directories. */
#include "csystem_private.h"

#ifdef __linux__

/* MARK: Files and directories */

int csystem_statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buffer) {
    return statx(dirfd, path, flags, mask, buffer);
}

uint64_t csystem_makedev(unsigned int major, unsigned int minor) {
    return makedev(major, minor);
}

int csystem_fstatfs_type(int fd, uint64_t *type) {
    if (type == NULL) {
        errno = EFAULT;
        return -1;
    }
    struct statfs status;
    if (fstatfs(fd, &status) != 0) {
        return -1;
    }
    /* f_type is a signed __fsword_t; the magic numbers are unsigned 32-bit. */
    *type = (uint64_t)(unsigned long)status.f_type;
    return 0;
}

/* Magic numbers <linux/magic.h> does not carry, from each filesystem's own source. */
#define CSYSTEM_ZFS_SUPER_MAGIC 0x2FC12FC1      /* OpenZFS, include/sys/fs/zfs.h */
#define CSYSTEM_NTFS_SB_MAGIC 0x5346544E        /* fs/ntfs: "NTFS" */
#define CSYSTEM_NTFS3_SUPER_MAGIC 0x7366746E    /* fs/ntfs3: "ntfs" */
#define CSYSTEM_JFS_SUPER_MAGIC 0x3153464A      /* fs/jfs/jfs_superblock.h: "JFS1" */
#define CSYSTEM_VIRTIOFS_SHARE_MAGIC 0x6A656A63 /* a virtiofs host share (Docker Desktop, lima) */

const char *csystem_filesystem_name(uint64_t magic) {
    switch (magic) {
    case EXT4_SUPER_MAGIC: return "ext2/3/4";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case XFS_SUPER_MAGIC: return "xfs";
    case CSYSTEM_ZFS_SUPER_MAGIC: return "zfs";
    case TMPFS_MAGIC: return "tmpfs";
    case RAMFS_MAGIC: return "ramfs";
    case NFS_SUPER_MAGIC: return "nfs";
    case FUSE_SUPER_MAGIC: return "fuse";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case V9FS_MAGIC: return "9p";
    case CIFS_SUPER_MAGIC: return "cifs";
    case SMB2_SUPER_MAGIC: return "smb2";
    case MSDOS_SUPER_MAGIC: return "vfat";
    case EXFAT_SUPER_MAGIC: return "exfat";
    case CSYSTEM_NTFS_SB_MAGIC: return "ntfs";
    case CSYSTEM_NTFS3_SUPER_MAGIC: return "ntfs3";
    case SQUASHFS_MAGIC: return "squashfs";
    case EROFS_SUPER_MAGIC_V1: return "erofs";
    case CSYSTEM_VIRTIOFS_SHARE_MAGIC: return "virtiofs";
    case F2FS_SUPER_MAGIC: return "f2fs";
    case CSYSTEM_JFS_SUPER_MAGIC: return "jfs";
    case REISERFS_SUPER_MAGIC: return "reiserfs";
    case PROC_SUPER_MAGIC: return "proc";
    case SYSFS_MAGIC: return "sysfs";
    default: return NULL;
    }
}

/* The record getdents64(2) writes (its man page's struct linux_dirent64):
   glibc's struct dirent64 has the same fixed part but a fixed-size name. */
struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

long csystem_getdents64(int fd, void *buffer, size_t length) {
#ifdef CSYSTEM_RAW_GETDENTS64
    return syscall(SYS_getdents64, fd, buffer, length);
#else
    return getdents64(fd, buffer, length);
#endif
}

int csystem_next_directory_entry(const void *buffer, size_t length, size_t *offset,
                                 csystem_directory_entry *entry) {
    if (buffer == NULL || offset == NULL || entry == NULL || *offset > length) {
        return -1;
    }
    if (*offset == length) {
        return 0;
    }
    const size_t header = offsetof(struct linux_dirent64, d_name);
    const size_t left = length - *offset;
    if (left < header) {
        return -1;
    }
    const unsigned char *record = (const unsigned char *)buffer + *offset;
    /* Copied out rather than cast: nothing here relies on the buffer's alignment. */
    struct linux_dirent64 fixed;
    memcpy(&fixed, record, header);
    if (fixed.d_reclen <= header || fixed.d_reclen > left) {
        return -1;
    }
    const char *name = (const char *)record + header;
    const char *end = memchr(name, '\0', fixed.d_reclen - header);
    if (end == NULL) {
        return -1;
    }
    entry->inode = fixed.d_ino;
    entry->type = fixed.d_type;
    entry->name = name;
    entry->name_length = (size_t)(end - name);
    *offset += fixed.d_reclen;
    return 1;
}

int csystem_set_lease(int fd, int lease) {
    return fcntl(fd, F_SETLEASE, lease);
}

int csystem_get_inode_flags(int fd, int *flags) {
    return ioctl(fd, FS_IOC_GETFLAGS, flags);
}

int csystem_set_inode_flags(int fd, const int *flags) {
    return ioctl(fd, FS_IOC_SETFLAGS, flags);
}

long csystem_get_xattr_at(int dirfd, const char *name, const char *attribute, void *buffer, size_t size) {
    char path[4200];
    int length = snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name);
    if (length < 0 || (size_t)length >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return (long)lgetxattr(path, attribute, buffer, size);
}

int csystem_rename_exchange(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, (unsigned int)RENAME_EXCHANGE);
}

int csystem_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, (unsigned int)RENAME_NOREPLACE);
}

#endif /* __linux__ */
