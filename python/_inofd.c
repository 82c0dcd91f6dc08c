/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inofd._inofd: the thin C part of the Python binding of libinofd.
 *
 * Two types: Instance (one struct inofd) and Event (one copied struct
 * inofd_event).  Everything else (enums, asyncio, the watchdog observer)
 * is pure Python in the inofd package.
 *
 * Ownership of caller data: the data= object of a watch is held by the
 * Instance in a dict wd -> object (the only strong reference the binding
 * takes for the watch).  The library is handed the object's address only
 * as a non-NULL marker and never dereferences it; events look their data
 * up in the dict by wd (and from_data by from_wd), so an event can never
 * reach a freed object.  The entry is removed when the registration's
 * IN_IGNORED without INOFD_EVF_MEMBER is handed out (its last event; wds
 * are not reused until they wrap) and every entry when the instance is
 * closed.  The dict is visible to the cycle collector (tp_traverse), so a
 * data object that refers back to its instance is collected too.
 *
 * The GIL: every libinofd call runs with the GIL held (a struct inofd is
 * not locked, the GIL serialises threads on it); only poll(2) runs
 * without it.  close() from another thread while read() polls wakes the
 * poll through an eventfd and the instance is freed when the last reader
 * leaves.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "inofd.h"

/* What the code below uses of CPython 3.10 and 3.9, for 3.8. */
#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o)
{
	Py_INCREF(o);
	return o;
}
#endif
#if PY_VERSION_HEX < 0x03090000
static int PyModule_AddType(PyObject *m, PyTypeObject *t)
{
	const char *name = strrchr(t->tp_name, '.') + 1;

	Py_INCREF(t);
	if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
		Py_DECREF(t);
		return -1;
	}
	return 0;
}
#endif

/* ------------------------------------------------------------ Event */

typedef struct {
	PyObject_HEAD
	unsigned long long seq;
	int type;
	int wd;
	unsigned int mask;
	unsigned int cookie;
	unsigned int flags;
	int error;
	unsigned long long ino;
	unsigned long long dev;
	int from_wd;
	PyObject *name;		/* bytes or None, as every PyObject below */
	PyObject *path;
	PyObject *data;
	PyObject *from_name;
	PyObject *from_path;
	PyObject *from_data;
} EventObject;

static PyTypeObject Event_Type;

static void event_dealloc(EventObject *e)
{
	PyObject_GC_UnTrack(e);
	Py_XDECREF(e->name);
	Py_XDECREF(e->path);
	Py_XDECREF(e->data);
	Py_XDECREF(e->from_name);
	Py_XDECREF(e->from_path);
	Py_XDECREF(e->from_data);
	PyObject_GC_Del(e);
}

static int event_traverse(EventObject *e, visitproc visit, void *arg)
{
	Py_VISIT(e->data);
	Py_VISIT(e->from_data);
	return 0;
}

static int event_clear(EventObject *e)
{
	Py_CLEAR(e->data);
	Py_CLEAR(e->from_data);
	return 0;
}

#define EV_OFF(f) offsetof(EventObject, f)
static PyMemberDef event_members[] = {
	{"seq", T_ULONGLONG, EV_OFF(seq), READONLY, "1, 2, 3, ... per instance, no gap"},
	{"wd", T_INT, EV_OFF(wd), READONLY, "the watch descriptor (-1 for a global RESCAN)"},
	{"mask", T_UINT, EV_OFF(mask), READONLY, "IN_* bits"},
	{"cookie", T_UINT, EV_OFF(cookie), READONLY, "the inotify cookie"},
	{"flags", T_UINT, EV_OFF(flags), READONLY, "EVF_* bits"},
	{"error", T_INT, EV_OFF(error), READONLY, "EV_ERROR: -errno, else 0"},
	{"ino", T_ULONGLONG, EV_OFF(ino), READONLY, "the watched object's inode"},
	{"dev", T_ULONGLONG, EV_OFF(dev), READONLY, "the watched object's device"},
	{"from_wd", T_INT, EV_OFF(from_wd), READONLY, "the source's wd (EV_RENAME), else -1"},
	{"name", T_OBJECT, EV_OFF(name), READONLY, "entry name (bytes) or None"},
	{"path", T_OBJECT, EV_OFF(path), READONLY, "full path (bytes) or None"},
	{"data", T_OBJECT, EV_OFF(data), READONLY, "the watch's data= object"},
	{"from_name", T_OBJECT, EV_OFF(from_name), READONLY, "source name (bytes) or None"},
	{"from_path", T_OBJECT, EV_OFF(from_path), READONLY, "source path (bytes) or None"},
	{"from_data", T_OBJECT, EV_OFF(from_data), READONLY, "the source watch's data"},
	{NULL}
};

static PyObject *fsdecode(PyObject *b)
{
	if (b == Py_None)
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(b),
						PyBytes_GET_SIZE(b));
}

static PyObject *ev_fsname(EventObject *e, void *c) { (void)c; return fsdecode(e->name); }
static PyObject *ev_fspath(EventObject *e, void *c) { (void)c; return fsdecode(e->path); }
static PyObject *ev_fsfrom_name(EventObject *e, void *c) { (void)c; return fsdecode(e->from_name); }
static PyObject *ev_fsfrom_path(EventObject *e, void *c) { (void)c; return fsdecode(e->from_path); }
/*
 * The members of inofd.EventType by value, handed over by inofd/__init__.py
 * (_set_event_types); until then, or for a value it lacks, Event.type is
 * the int.
 */
static PyObject *event_types;

static PyObject *ev_type(EventObject *e, void *c)
{
	(void)c;
	if (event_types && e->type >= 0 && e->type < PyTuple_GET_SIZE(event_types)) {
		PyObject *t = PyTuple_GET_ITEM(event_types, e->type);

		if (t != Py_None)
			return Py_NewRef(t);
	}
	return PyLong_FromLong(e->type);
}

static PyObject *ev_is_dir(EventObject *e, void *c)
{
	(void)c;
	return PyBool_FromLong(e->mask & IN_ISDIR);
}

static PyGetSetDef event_getset[] = {
	{"type", (getter)ev_type, NULL, "EV_*, as an inofd.EventType", NULL},
	{"fsname", (getter)ev_fsname, NULL, "name as str (os.fsdecode) or None", NULL},
	{"fspath", (getter)ev_fspath, NULL, "path as str (os.fsdecode) or None", NULL},
	{"fsfrom_name", (getter)ev_fsfrom_name, NULL, "from_name as str or None", NULL},
	{"fsfrom_path", (getter)ev_fsfrom_path, NULL, "from_path as str or None", NULL},
	{"is_dir", (getter)ev_is_dir, NULL, "mask has IN_ISDIR", NULL},
	{NULL}
};

static PyObject *event_repr(EventObject *e)
{
	PyObject *t = ev_type(e, NULL), *r;

	if (!t)
		return NULL;
	r = PyUnicode_FromFormat(
		"inofd.Event(seq=%llu, type=%R, wd=%d, mask=0x%x, flags=0x%x, "
		"error=%d, name=%R, path=%R, from_wd=%d, from_path=%R)",
		e->seq, t, e->wd, e->mask, e->flags, e->error,
		e->name, e->path, e->from_wd, e->from_path);
	Py_DECREF(t);
	return r;
}

static PyTypeObject Event_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "inofd._inofd.Event",
	.tp_doc = "One event of an Instance: every field of struct inofd_event,\n"
		  "read-only.  Names and paths are bytes (None when the library\n"
		  "has none); fsname, fspath, fsfrom_name and fsfrom_path give\n"
		  "them as str through os.fsdecode.",
	.tp_basicsize = sizeof(EventObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_dealloc = (destructor)event_dealloc,
	.tp_traverse = (traverseproc)event_traverse,
	.tp_clear = (inquiry)event_clear,
	.tp_members = event_members,
	.tp_getset = event_getset,
	.tp_repr = (reprfunc)event_repr,
};

/* ------------------------------------------------------------ Instance */

typedef struct {
	PyObject_HEAD
	struct inofd *in;	/* NULL once closed */
	int wakefd;		/* eventfd: close() wakes a polling read() */
	int readers;		/* read() calls polling without the GIL */
	int closing;		/* close() came while readers > 0 */
	int close_begun;	/* close() runs its hooks: closed from now */
	PyObject *close_hooks;	/* list of callables close() calls, or NULL */
	PyObject *datamap;	/* dict wd -> data (owned references) */
	PyObject *pending;	/* list of events for iteration */
	Py_ssize_t pending_pos;
} InstanceObject;

static PyTypeObject Instance_Type;

/*
 * OSError from a -errno of the library, with text (NULL: inofd_strerror's)
 * and the caller's filename object (or NULL).
 */
static PyObject *set_oserror_text(int err, const char *text, PyObject *filename)
{
	PyObject *exc;

	if (err < 0)
		err = -err;
	if (!text)
		text = inofd_strerror(-err);
	if (filename)
		exc = PyObject_CallFunction(PyExc_OSError, "isO", err, text, filename);
	else
		exc = PyObject_CallFunction(PyExc_OSError, "is", err, text);
	if (exc) {
		PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
		Py_DECREF(exc);
	}
	return NULL;
}

static PyObject *set_oserror(int err, PyObject *filename)
{
	return set_oserror_text(err, NULL, filename);
}

/* EINVAL of a call on a wd: the wd is not (or no longer) a watch. */
static PyObject *wd_error(int r, const char *call, int wd)
{
	char text[160];

	if (r != -EINVAL)
		return set_oserror(r, NULL);
	PyOS_snprintf(text, sizeof(text), "%s(%d): no such watch in this instance "
		      "(never made, or it has ended)", call, wd);
	return set_oserror_text(r, text, NULL);
}

/* The options inofd_new() refused, or a forced backend it lacks, by name. */
static const char *new_error(int r, unsigned int pair, unsigned int coal,
			     unsigned int flags)
{
	if (r == -EINVAL && pair > 60000)
		return "pair_timeout_ms: more than 60000 (one minute)";
	if (r == -EINVAL && coal > 3600000)
		return "coalesce_ms: more than 3600000 (one hour)";
	if (r != -ENOSYS)
		return NULL;
	if (flags & INOFD_FORCE_KERNEL)
		return "backend 'kernel': this kernel has no INOTIFY_IOC_WATCH "
		       "(it needs the patched kernel); backend=None picks procfd "
		       "or fanotify";
	if (flags & INOFD_FORCE_PROCFD)
		return "backend 'procfd': /proc is not mounted";
	if (flags & INOFD_FORCE_FANOTIFY)
		return "backend 'fanotify': fanotify is unavailable here (it "
		       "needs Linux 5.9 and CAP_SYS_ADMIN)";
	return NULL;
}

#define EVENT_BITS	(IN_ALL_EVENTS | IN_UNMOUNT)
#define KNOWN_BITS	(EVENT_BITS | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK | \
			 IN_MASK_CREATE | IN_MASK_ADD | IN_ONESHOT)

/* What is wrong with a mask the library refused with EINVAL, or NULL. */
static const char *mask_error(uint32_t mask, int is_fd)
{
	if (mask & ~KNOWN_BITS)
		return "mask: bits that are no IN_* flag";
	if (!(mask & EVENT_BITS))
		return "mask: no event bit (IN_CREATE, IN_MODIFY, IN_ALL_EVENTS, ...)";
	if ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE))
		return "mask: IN_MASK_ADD and IN_MASK_CREATE contradict each other";
	if (is_fd && (mask & IN_DONT_FOLLOW))
		return "mask: IN_DONT_FOLLOW means nothing for a descriptor";
	return NULL;
}

/*
 * Free the instance.  nogil: inofd_free() runs without the GIL (closing a
 * fanotify group waits for an SRCU grace period, 0.1-0.3 s on a busy
 * host, which must not stall an event loop in another thread); the
 * instance reads as closed (in NULL) before.
 */
static void instance_release(InstanceObject *self, int nogil)
{
	struct inofd *in = self->in;

	self->in = NULL;
	if (in && nogil) {
		Py_BEGIN_ALLOW_THREADS
		inofd_free(in);
		Py_END_ALLOW_THREADS
	} else if (in) {
		inofd_free(in);
	}
	if (self->wakefd >= 0) {
		close(self->wakefd);
		self->wakefd = -1;
	}
	if (self->datamap)
		PyDict_Clear(self->datamap);
	Py_CLEAR(self->pending);
}

static int check_open(InstanceObject *self)
{
	if (!self->in || self->closing || self->close_begun) {
		PyErr_SetString(PyExc_ValueError, "I/O operation on closed inofd.Instance");
		return -1;
	}
	return 0;
}

static int conv_uint(PyObject *o, void *p);

static int instance_init(InstanceObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"pair_timeout_ms", "coalesce_ms", "queue_max",
				 "backend", "raw_moves", NULL};
	unsigned int pair = 0, coal = 0, qmax = 0;
	PyObject *backend = Py_None;
	int raw = 0, r;
	long b = 0;

	if (self->in || self->datamap) {
		PyErr_SetString(PyExc_TypeError, "Instance.__init__ called twice");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&O&O&Op:Instance", kwlist,
					 conv_uint, &pair, conv_uint, &coal,
					 conv_uint, &qmax, &backend, &raw))
		return -1;
	INOFD_OPTS(o, .pair_timeout_ms = pair, .coalesce_ms = coal,
		   .queue_max = qmax);
	if (backend != Py_None) {
		if (PyUnicode_Check(backend)) {
			const char *s = PyUnicode_AsUTF8(backend);

			if (!s)
				return -1;
			if (!strcmp(s, "kernel"))
				b = INOFD_BACKEND_KERNEL;
			else if (!strcmp(s, "procfd"))
				b = INOFD_BACKEND_PROCFD;
			else if (!strcmp(s, "fanotify"))
				b = INOFD_BACKEND_FANOTIFY;
			else {
				PyErr_Format(PyExc_ValueError,
					     "backend %R: not 'kernel', 'procfd' or 'fanotify'",
					     backend);
				return -1;
			}
		} else if (PyLong_Check(backend)) {
			b = PyLong_AsLong(backend);
			if (b == -1 && PyErr_Occurred())
				return -1;
		} else {
			PyErr_SetString(PyExc_TypeError, "backend must be None, a str or an int");
			return -1;
		}
		switch (b) {
		case INOFD_BACKEND_KERNEL: o.flags |= INOFD_FORCE_KERNEL; break;
		case INOFD_BACKEND_PROCFD: o.flags |= INOFD_FORCE_PROCFD; break;
		case INOFD_BACKEND_FANOTIFY: o.flags |= INOFD_FORCE_FANOTIFY; break;
		default:
			PyErr_Format(PyExc_ValueError, "backend %ld: not a BACKEND_* value", b);
			return -1;
		}
	}
	if (raw)
		o.flags |= INOFD_RAW_MOVES;
	self->datamap = PyDict_New();
	if (!self->datamap)
		return -1;
	self->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (self->wakefd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	r = inofd_new(&self->in, &o);
	if (r < 0) {
		self->in = NULL;
		set_oserror_text(r, new_error(r, pair, coal, o.flags), NULL);
		return -1;
	}
	return 0;
}

static PyObject *instance_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	InstanceObject *self = (InstanceObject *)type->tp_alloc(type, 0);

	(void)args; (void)kw;
	if (self)
		self->wakefd = -1;
	return (PyObject *)self;
}

static int instance_traverse(InstanceObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->close_hooks);
	Py_VISIT(self->datamap);
	Py_VISIT(self->pending);
	return 0;
}

static int instance_clear(InstanceObject *self)
{
	Py_CLEAR(self->close_hooks);
	if (self->datamap)
		PyDict_Clear(self->datamap);
	Py_CLEAR(self->pending);
	return 0;
}

static void instance_dealloc(InstanceObject *self)
{
	PyObject_GC_UnTrack(self);
	/* no reader can be polling: it holds a reference */
	instance_release(self, 0);
	Py_CLEAR(self->datamap);
	Py_CLEAR(self->close_hooks);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/*
 * An int in 0..2^32-1 into *out (PyArg's "I" would wrap a negative one);
 * what names it in the errors: "mask" or "value".
 */
static int conv_u32(PyObject *o, uint32_t *out, const char *what)
{
	long long s;
	int overflow;

	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s",
			     what, Py_TYPE(o)->tp_name);
		return 0;
	}
	s = PyLong_AsLongLongAndOverflow(o, &overflow);
	if (s == -1 && PyErr_Occurred())
		return 0;
	if (overflow || s < 0 || s > 0xffffffffLL) {
		PyErr_Format(PyExc_ValueError, "%s out of range (0 .. 2**32-1)",
			     what);
		return 0;
	}
	*out = (uint32_t)s;
	return 1;
}

/* mask: an int in 0..2^32-1 */
static int conv_mask(PyObject *o, void *p)
{
	return conv_u32(o, p, "mask");
}

/* an unsigned int option (timeouts, queue_max, max_depth) */
static int conv_uint(PyObject *o, void *p)
{
	uint32_t v;

	if (!conv_u32(o, &v, "value"))
		return 0;
	*(unsigned int *)p = v;
	return 1;
}

static int conv_flags(PyObject *o, void *p)
{
	return conv_mask(o, p);
}

/* dirfd: an int (AT_FDCWD included) or None for AT_FDCWD */
static int conv_dirfd(PyObject *o, void *p)
{
	long v;

	if (o == Py_None) {
		*(int *)p = AT_FDCWD;
		return 1;
	}
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "dirfd must be an int or None, not %.100s",
			     Py_TYPE(o)->tp_name);
		return 0;
	}
	v = PyLong_AsLong(o);
	if (v == -1 && PyErr_Occurred())
		return 0;
	if (v < INT_MIN || v > INT_MAX) {
		PyErr_SetString(PyExc_ValueError, "dirfd out of range");
		return 0;
	}
	*(int *)p = (int)v;
	return 1;
}

/*
 * After a successful watch call: the instance takes its reference to data
 * (None is not stored).
 */
static PyObject *watch_done(InstanceObject *self, int wd, PyObject *data,
			    PyObject *filename, uint32_t mask)
{
	PyObject *key;

	if (wd < 0)
		return set_oserror_text(wd, wd == -EINVAL ? mask_error(mask, !filename) : NULL,
					filename);
	key = PyLong_FromLong(wd);
	if (!key)
		goto undo;
	if (data != Py_None && PyDict_SetItem(self->datamap, key, data) < 0) {
		Py_DECREF(key);
		goto undo;
	}
	return key;
undo:
	/* no memory for the bookkeeping: the watch must not outlive it */
	inofd_unwatch(self->in, wd);
	return NULL;
}

static void *data_marker(PyObject *data)
{
	return data == Py_None ? NULL : (void *)data;
}

PyDoc_STRVAR(watch_fd_doc,
"watch_fd($self, /, fd, mask, data=None)\n--\n\n-> wd.  "
"Watch the object the open descriptor fd (an int or an object with\n"
"fileno()) refers to; fd may be closed as soon as this returns.\n"
"data is handed back in every event of the watch and kept alive by the\n"
"instance until the watch's IN_IGNORED is read (or close()).");

static PyObject *instance_watch_fd(InstanceObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"fd", "mask", "data", NULL};
	PyObject *fdobj, *data = Py_None;
	uint32_t mask;
	int fd, wd;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&|O:watch_fd", kwlist,
					 &fdobj, conv_mask, &mask, &data))
		return NULL;
	if (PyLong_Check(fdobj)) {
		long v = PyLong_AsLong(fdobj);

		if (v == -1 && PyErr_Occurred())
			return NULL;
		if (v < INT_MIN || v > INT_MAX)
			return set_oserror(-EBADF, NULL);
		fd = (int)v;
	} else {
		fd = PyObject_AsFileDescriptor(fdobj);
		if (fd < 0)
			return NULL;
	}
	if (check_open(self))
		return NULL;
	wd = inofd_watch_fd(self->in, fd, mask, data_marker(data));
	return watch_done(self, wd, data, NULL, mask);
}

PyDoc_STRVAR(watch_path_doc,
"watch_path($self, /, path, mask, data=None)\n--\n\n-> wd.  "
"Watch a path (str, bytes or os.PathLike), as inotify_add_watch does.");

static PyObject *instance_watch_path(InstanceObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"path", "mask", "data", NULL};
	PyObject *arg, *path, *data = Py_None, *ret;
	uint32_t mask;
	int wd;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&|O:watch_path", kwlist,
					 &arg, conv_mask, &mask, &data) ||
	    !PyUnicode_FSConverter(arg, &path))
		return NULL;
	if (check_open(self)) {
		Py_DECREF(path);
		return NULL;
	}
	wd = inofd_watch_path(self->in, PyBytes_AS_STRING(path), mask,
			      data_marker(data));
	ret = watch_done(self, wd, data, arg, mask);
	Py_DECREF(path);
	return ret;
}

PyDoc_STRVAR(watch_at_doc,
"watch_at($self, /, dirfd, path, mask, flags=0, data=None)\n--\n\n-> wd.  "
"Watch path relative to dirfd (None or os AT_FDCWD: the working\n"
"directory); flags: AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH.");

static PyObject *instance_watch_at(InstanceObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"dirfd", "path", "mask", "flags", "data", NULL};
	PyObject *arg, *path, *data = Py_None, *ret;
	uint32_t mask, flags = 0;
	int dirfd, wd;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&OO&|O&O:watch_at", kwlist,
					 conv_dirfd, &dirfd, &arg,
					 conv_mask, &mask, conv_flags, &flags, &data) ||
	    !PyUnicode_FSConverter(arg, &path))
		return NULL;
	if (check_open(self)) {
		Py_DECREF(path);
		return NULL;
	}
	wd = inofd_watch_at(self->in, dirfd, PyBytes_AS_STRING(path), mask,
			    flags, data_marker(data));
	ret = watch_done(self, wd, data, arg, mask);
	Py_DECREF(path);
	return ret;
}

PyDoc_STRVAR(watch_tree_doc,
"watch_tree($self, /, path, mask, exclude=(), max_depth=0, flags=0,\n"
"           dirfd=None, data=None)\n--\n\n-> wd.  "
"Watch the directory path and every directory below it as one\n"
"registration (libinofd's inofd_watch_tree_at).  exclude: fnmatch patterns\n"
"(str or bytes) matched against directory names; max_depth 0: no limit;\n"
"flags: AT_*, TREE_XDEV, TREE_MEMBER_ENDS.");

static PyObject *instance_watch_tree(InstanceObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"path", "mask", "exclude", "max_depth", "flags",
				 "dirfd", "data", NULL};
	PyObject *arg, *path, *exclude = NULL, *data = Py_None, *ret = NULL;
	PyObject *seq = NULL, **encoded = NULL;
	const char **pats = NULL;
	uint32_t mask, flags = 0;
	unsigned int max_depth = 0;
	int dirfd = AT_FDCWD, wd;
	Py_ssize_t n = 0, i;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&|OO&O&O&O:watch_tree", kwlist,
					 &arg, conv_mask, &mask, &exclude, conv_uint, &max_depth,
					 conv_flags, &flags, conv_dirfd, &dirfd, &data) ||
	    !PyUnicode_FSConverter(arg, &path))
		return NULL;
	if (exclude && exclude != Py_None) {
		if (PyUnicode_Check(exclude) || PyBytes_Check(exclude)) {
			PyErr_SetString(PyExc_TypeError,
					"exclude must be a sequence of patterns, not one pattern");
			goto out;
		}
		seq = PySequence_Fast(exclude, "exclude must be a sequence of str or bytes");
		if (!seq)
			goto out;
		n = PySequence_Fast_GET_SIZE(seq);
		encoded = PyMem_Calloc(n + 1, sizeof(*encoded));
		pats = PyMem_Calloc(n + 1, sizeof(*pats));
		if (!encoded || !pats) {
			PyErr_NoMemory();
			goto out;
		}
		for (i = 0; i < n; i++) {
			PyObject *item = PySequence_Fast_GET_ITEM(seq, i);

			if (!PyUnicode_Check(item) && !PyBytes_Check(item)) {
				PyErr_Format(PyExc_TypeError,
					     "exclude patterns must be str or bytes, not %.100s",
					     Py_TYPE(item)->tp_name);
				goto out;
			}
			if (!PyUnicode_FSConverter(item, &encoded[i]))
				goto out;
			pats[i] = PyBytes_AS_STRING(encoded[i]);
		}
	}
	if (check_open(self))
		goto out;
	{
		INOFD_TREE_OPTS(to, .exclude = pats, .flags = flags,
				.max_depth = max_depth, .data = data_marker(data));
		wd = inofd_watch_tree_at(self->in, dirfd, PyBytes_AS_STRING(path),
					 mask, &to);
	}
	ret = watch_done(self, wd, data, arg, mask);
out:
	if (encoded)
		for (i = 0; i < n; i++)
			Py_XDECREF(encoded[i]);
	PyMem_Free(encoded);
	PyMem_Free(pats);
	Py_XDECREF(seq);
	Py_DECREF(path);
	return ret;
}

static int conv_wd(PyObject *o, int *wd)
{
	long v;

	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "wd must be an int, not %.100s",
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	v = PyLong_AsLong(o);
	if (v == -1 && PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_OverflowError))
			return -1;
		PyErr_Clear();
		v = -1;		/* not a wd: the library says EINVAL */
	}
	*wd = (v < INT_MIN || v > INT_MAX) ? -1 : (int)v;
	return 0;
}

PyDoc_STRVAR(unwatch_doc,
"unwatch($self, wd, /)\n--\n\n"
"Remove the registration wd.  Its IN_IGNORED event is queued at once;\n"
"the data of the watch is released when that event is read.");

static PyObject *instance_unwatch(InstanceObject *self, PyObject *arg)
{
	int wd, r;

	if (conv_wd(arg, &wd) < 0 || check_open(self))
		return NULL;
	r = inofd_unwatch(self->in, wd);
	if (r < 0)
		return wd_error(r, "unwatch", wd);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(wd_path_doc,
"wd_path($self, wd, /)\n--\n\n-> bytes or None.  "
"The watch's current path (None when the library does not know it).");

static PyObject *instance_wd_path(InstanceObject *self, PyObject *arg)
{
	const char *p = NULL;
	int wd, r;

	if (conv_wd(arg, &wd) < 0 || check_open(self))
		return NULL;
	r = inofd_wd_path(self->in, wd, &p);
	if (r < 0)
		return wd_error(r, "wd_path", wd);
	if (!p)
		Py_RETURN_NONE;
	return PyBytes_FromString(p);
}

PyDoc_STRVAR(wd_data_doc, "wd_data($self, wd, /)\n--\n\nThe data= object of the watch (None if none).");

static PyObject *instance_wd_data(InstanceObject *self, PyObject *arg)
{
	void *d = NULL;
	PyObject *v;
	int wd, r;

	if (conv_wd(arg, &wd) < 0 || check_open(self))
		return NULL;
	r = inofd_wd_data(self->in, wd, &d);
	if (r < 0)
		return wd_error(r, "wd_data", wd);
	v = PyDict_GetItemWithError(self->datamap, arg);
	if (!v) {
		if (PyErr_Occurred())
			return NULL;
		Py_RETURN_NONE;
	}
	Py_INCREF(v);
	return v;
}

static PyObject *instance_fileno(InstanceObject *self, PyObject *unused)
{
	(void)unused;
	if (check_open(self))
		return NULL;
	return PyLong_FromLong(inofd_fd(self->in));
}

PyDoc_STRVAR(timeout_doc,
"timeout($self, /)\n--\n\n-> int.  "
"libinofd's inofd_timeout: ms to wait before calling read(timeout=0) again\n"
"(0: now, -1: nothing pending).");

static PyObject *instance_timeout(InstanceObject *self, PyObject *unused)
{
	(void)unused;
	if (check_open(self))
		return NULL;
	return PyLong_FromLong(inofd_timeout(self->in));
}

static PyObject *bytes_or_none(const char *s)
{
	if (!s)
		Py_RETURN_NONE;
	return PyBytes_FromString(s);
}

static PyObject *lookup_data(InstanceObject *self, int wd, const void *marker)
{
	PyObject *key, *v;

	if (!marker || wd < 0)
		Py_RETURN_NONE;
	key = PyLong_FromLong(wd);
	if (!key)
		return NULL;
	v = PyDict_GetItemWithError(self->datamap, key);
	Py_DECREF(key);
	if (!v) {
		if (PyErr_Occurred())
			return NULL;
		Py_RETURN_NONE;
	}
	Py_INCREF(v);
	return v;
}

static PyObject *make_event(InstanceObject *self, const struct inofd_event *ev)
{
	EventObject *e = PyObject_GC_New(EventObject, &Event_Type);

	if (!e)
		return NULL;
	e->seq = ev->seq;
	e->type = ev->type;
	e->wd = ev->wd;
	e->mask = ev->mask;
	e->cookie = ev->cookie;
	e->flags = ev->flags;
	e->error = ev->error;
	e->ino = ev->ino;
	e->dev = ev->dev;
	e->from_wd = ev->from_wd;
	e->name = bytes_or_none(ev->name);
	e->path = bytes_or_none(ev->path);
	e->data = lookup_data(self, ev->wd, ev->data);
	e->from_name = bytes_or_none(ev->from_name);
	e->from_path = bytes_or_none(ev->from_path);
	e->from_data = lookup_data(self, ev->from_wd, ev->from_data);
	if (!e->name || !e->path || !e->data || !e->from_name ||
	    !e->from_path || !e->from_data) {
		/* members may be NULL: dealloc uses XDECREF */
		PyObject_GC_Track(e);
		Py_DECREF(e);
		return NULL;
	}
	/*
	 * Only data can make a cycle through an event (bytes and None hold
	 * nothing): an event without a container as data is left untracked,
	 * so the collections a stream of events triggers have nothing to
	 * walk (a read() of 2,000 events held in a list cost twice as much
	 * per event when each was tracked).
	 */
	if ((e->data != Py_None && PyObject_IS_GC(e->data)) ||
	    (e->from_data != Py_None && PyObject_IS_GC(e->from_data)))
		PyObject_GC_Track(e);
	/* the registration's last event: release its data */
	if (ev->type == INOFD_EV_INOTIFY && (ev->mask & IN_IGNORED) &&
	    !(ev->flags & INOFD_EVF_MEMBER) && ev->wd >= 0) {
		PyObject *key = PyLong_FromLong(ev->wd);

		if (!key || (PyDict_DelItem(self->datamap, key) < 0 &&
			     !PyErr_ExceptionMatches(PyExc_KeyError))) {
			Py_XDECREF(key);
			Py_DECREF(e);
			return NULL;
		}
		PyErr_Clear();
		Py_DECREF(key);
	}
	return (PyObject *)e;
}

/* inofd_read() and every ready event, appended to list: -1 on error */
static int drain(InstanceObject *self, PyObject *list)
{
	const struct inofd_event *ev;
	int r;

	r = inofd_read(self->in);
	if (r < 0) {
		set_oserror(r, NULL);
		return -1;
	}
	while ((r = inofd_next(self->in, &ev)) > 0) {
		PyObject *e = make_event(self, ev);

		if (!e || PyList_Append(list, e) < 0) {
			Py_XDECREF(e);
			return -1;
		}
		Py_DECREF(e);
	}
	if (r < 0) {
		set_oserror(r, NULL);
		return -1;
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Events ready within timeout_ms (<0: block): a list, maybe empty. */
static PyObject *read_events(InstanceObject *self, double timeout_ms)
{
	PyObject *list;
	double deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;

	if (check_open(self))
		return NULL;
	list = PyList_New(0);
	if (!list)
		return NULL;
	for (;;) {
		struct pollfd p[2];
		int lt, wait, r, err;

		if (drain(self, list) < 0)
			goto fail;
		if (PyList_GET_SIZE(list) > 0)
			return list;
		lt = inofd_timeout(self->in);
		if (lt == 0)
			continue;
		if (timeout_ms >= 0) {
			double left = deadline - now_ms();

			if (left <= 0)
				return list;
			wait = left > INT_MAX ? INT_MAX : (int)(left + 0.999);
			if (lt > 0 && lt < wait)
				wait = lt;
		} else {
			wait = lt;
		}
		p[0].fd = inofd_fd(self->in);
		p[0].events = POLLIN;
		p[1].fd = self->wakefd;
		p[1].events = POLLIN;
		self->readers++;
		Py_BEGIN_ALLOW_THREADS
		r = poll(p, 2, wait);
		err = errno;
		Py_END_ALLOW_THREADS
		self->readers--;
		if (self->closing) {
			if (self->readers == 0)
				instance_release(self, 1);
			PyErr_SetString(PyExc_ValueError,
					"inofd.Instance closed while reading");
			goto fail;
		}
		if (r < 0 && err == EINTR) {
			if (PyErr_CheckSignals() < 0)
				goto fail;
		} else if (r < 0) {
			errno = err;
			PyErr_SetFromErrno(PyExc_OSError);
			goto fail;
		}
	}
fail:
	Py_DECREF(list);
	return NULL;
}

PyDoc_STRVAR(read_doc,
"read($self, /, timeout=None)\n--\n\n-> list of Event.  "
"The events ready now; if none, waits for some (poll(2) on fileno(),\n"
"the GIL released, honouring timeout() for rename pairing and\n"
"coalescing windows) at most timeout seconds (None: no limit, 0: do not\n"
"wait).  Returns an empty list when the time runs out.");

static PyObject *instance_read(InstanceObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"timeout", NULL};
	PyObject *t = Py_None;
	double ms = -1;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:read", kwlist, &t))
		return NULL;
	if (t != Py_None) {
		double s = PyFloat_AsDouble(t);

		if (s == -1.0 && PyErr_Occurred())
			return NULL;
		if (!(s >= 0)) {
			PyErr_SetString(PyExc_ValueError, "timeout must be >= 0 or None");
			return NULL;
		}
		ms = s * 1e3;
	}
	return read_events(self, ms);
}

static PyObject *instance_iter(InstanceObject *self)
{
	if (check_open(self))
		return NULL;
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *instance_iternext(InstanceObject *self)
{
	PyObject *e;

	if (!self->pending || self->pending_pos >= PyList_GET_SIZE(self->pending)) {
		PyObject *list = read_events(self, -1);

		if (!list)
			return NULL;
		Py_XSETREF(self->pending, list);
		self->pending_pos = 0;
		if (PyList_GET_SIZE(list) == 0)
			return NULL;
	}
	e = PyList_GET_ITEM(self->pending, self->pending_pos);
	/* drop the list's reference as we go: a slot is never read twice */
	PyList_SET_ITEM(self->pending, self->pending_pos, Py_NewRef(Py_None));
	self->pending_pos++;
	return e;
}

PyDoc_STRVAR(close_doc,
"close($self, /)\n--\n\n"
"Free the instance: its watches end and their data is released.\n"
"Idempotent; any later use raises ValueError.  A read() blocked in\n"
"another thread wakes and raises ValueError.");

/* Call (once) what _add_close_hook() registered; errors are unraisable. */
static void run_close_hooks(InstanceObject *self)
{
	PyObject *hooks = self->close_hooks;
	Py_ssize_t i;

	self->close_hooks = NULL;
	if (!hooks)
		return;
	for (i = 0; i < PyList_GET_SIZE(hooks); i++) {
		PyObject *r = PyObject_CallObject(PyList_GET_ITEM(hooks, i), NULL);

		if (r)
			Py_DECREF(r);
		else
			PyErr_WriteUnraisable(PyList_GET_ITEM(hooks, i));
	}
	Py_DECREF(hooks);
}

static PyObject *instance_close(InstanceObject *self, PyObject *unused)
{
	(void)unused;
	if (!self->in || self->closing || self->close_begun)
		Py_RETURN_NONE;
	/*
	 * Before the fd goes: an event loop can still remove its reader.  A
	 * hook is Python code, during which another thread may run: from
	 * here on the instance is closed to it (_add_close_hook() included,
	 * whose hook would never be called).
	 */
	self->close_begun = 1;
	run_close_hooks(self);
	if (!self->in)	/* a hook's doing */
		Py_RETURN_NONE;
	if (self->readers > 0) {
		uint64_t one = 1;

		self->closing = 1;
		if (write(self->wakefd, &one, sizeof(one)) < 0) {
			/* a counter that cannot overflow here; nothing to do */
		}
		Py_RETURN_NONE;
	}
	instance_release(self, 1);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(add_close_hook_doc,
"_add_close_hook($self, hook, /)\n--\n\n"
"Call hook() when close() is called (before the descriptor is closed;\n"
"in the thread that closes).  For inofd.asyncio; not for general use.");

static PyObject *instance_add_close_hook(InstanceObject *self, PyObject *hook)
{
	if (check_open(self))
		return NULL;
	if (!PyCallable_Check(hook)) {
		PyErr_SetString(PyExc_TypeError, "hook must be callable");
		return NULL;
	}
	if (!self->close_hooks && !(self->close_hooks = PyList_New(0)))
		return NULL;
	if (PyList_Append(self->close_hooks, hook) < 0)
		return NULL;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(remove_close_hook_doc,
"_remove_close_hook($self, hook, /)\n--\n\n"
"Undo _add_close_hook(hook) (nothing if it is not there).");

static PyObject *instance_remove_close_hook(InstanceObject *self, PyObject *hook)
{
	Py_ssize_t i;

	if (!self->close_hooks)
		Py_RETURN_NONE;
	for (i = PyList_GET_SIZE(self->close_hooks) - 1; i >= 0; i--)
		if (PyList_GET_ITEM(self->close_hooks, i) == hook)
			return PySequence_DelItem(self->close_hooks, i) < 0 ? NULL :
			       Py_NewRef(Py_None);
	Py_RETURN_NONE;
}

static PyObject *instance_enter(InstanceObject *self, PyObject *unused)
{
	(void)unused;
	if (check_open(self))
		return NULL;
	return Py_NewRef(self);
}

static PyObject *instance_exit(InstanceObject *self, PyObject *args)
{
	(void)args;
	return instance_close(self, NULL);
}

static PyObject *instance_get_backend(InstanceObject *self, void *c)
{
	(void)c;
	if (check_open(self))
		return NULL;
	return PyLong_FromLong(inofd_backend(self->in));
}

static PyObject *instance_get_watch_count(InstanceObject *self, void *c)
{
	(void)c;
	if (check_open(self))
		return NULL;
	return PyLong_FromLong(inofd_watch_count(self->in));
}

static PyObject *instance_get_closed(InstanceObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(!self->in || self->closing || self->close_begun);
}

static PyMethodDef instance_methods[] = {
	{"watch_fd", (PyCFunction)(void (*)(void))instance_watch_fd,
	 METH_VARARGS | METH_KEYWORDS, watch_fd_doc},
	{"watch_path", (PyCFunction)(void (*)(void))instance_watch_path,
	 METH_VARARGS | METH_KEYWORDS, watch_path_doc},
	{"watch_at", (PyCFunction)(void (*)(void))instance_watch_at,
	 METH_VARARGS | METH_KEYWORDS, watch_at_doc},
	{"watch_tree", (PyCFunction)(void (*)(void))instance_watch_tree,
	 METH_VARARGS | METH_KEYWORDS, watch_tree_doc},
	{"unwatch", (PyCFunction)instance_unwatch, METH_O, unwatch_doc},
	{"wd_path", (PyCFunction)instance_wd_path, METH_O, wd_path_doc},
	{"wd_data", (PyCFunction)instance_wd_data, METH_O, wd_data_doc},
	{"fileno", (PyCFunction)instance_fileno, METH_NOARGS,
	 "fileno($self, /)\n--\n\nThe descriptor to poll (selectors, asyncio add_reader)."},
	{"timeout", (PyCFunction)instance_timeout, METH_NOARGS, timeout_doc},
	{"read", (PyCFunction)(void (*)(void))instance_read,
	 METH_VARARGS | METH_KEYWORDS, read_doc},
	{"close", (PyCFunction)instance_close, METH_NOARGS, close_doc},
	{"_add_close_hook", (PyCFunction)instance_add_close_hook, METH_O,
	 add_close_hook_doc},
	{"_remove_close_hook", (PyCFunction)instance_remove_close_hook, METH_O,
	 remove_close_hook_doc},
	{"__enter__", (PyCFunction)instance_enter, METH_NOARGS,
	 "__enter__($self, /)\n--\n\n"},
	{"__exit__", (PyCFunction)instance_exit, METH_VARARGS,
	 "__exit__($self, *exc_info)\n--\n\nclose()."},
	{NULL}
};

static PyGetSetDef instance_getset[] = {
	{"backend", (getter)instance_get_backend, NULL, "BACKEND_* in use", NULL},
	{"watch_count", (getter)instance_get_watch_count, NULL,
	 "registrations held (libinofd's inofd_watch_count)", NULL},
	{"closed", (getter)instance_get_closed, NULL, "True after close()", NULL},
	{NULL}
};

static PyTypeObject Instance_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "inofd._inofd.Instance",
	.tp_doc = "Instance(pair_timeout_ms=0, coalesce_ms=0, queue_max=0,\n"
		  "         backend=None, raw_moves=False)\n--\n\n"
		  "One libinofd instance (inofd_new).  backend: None (the best\n"
		  "available), 'kernel', 'procfd', 'fanotify' or a BACKEND_* int:\n"
		  "that one or OSError(ENOSYS).  Iterating blocks for events.",
	.tp_basicsize = sizeof(InstanceObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_new = instance_new,
	.tp_init = (initproc)instance_init,
	.tp_dealloc = (destructor)instance_dealloc,
	.tp_traverse = (traverseproc)instance_traverse,
	.tp_clear = (inquiry)instance_clear,
	.tp_iter = (getiterfunc)instance_iter,
	.tp_iternext = (iternextfunc)instance_iternext,
	.tp_methods = instance_methods,
	.tp_getset = instance_getset,
};

/* ------------------------------------------------------------ module */

static PyObject *mod_strerror(PyObject *m, PyObject *arg)
{
	long v = PyLong_AsLong(arg);

	(void)m;
	if (v == -1 && PyErr_Occurred())
		return NULL;
	if (v > 0)
		v = -v;
	if (v < INT_MIN)
		v = INT_MIN;
	return PyUnicode_FromString(inofd_strerror((int)v));
}

static PyObject *mod_version(PyObject *m, PyObject *unused)
{
	(void)m; (void)unused;
	return Py_BuildValue("(II)", inofd_major_version(), inofd_minor_version());
}

static PyObject *mod_set_event_types(PyObject *m, PyObject *arg)
{
	(void)m;
	if (!PyTuple_Check(arg)) {
		PyErr_SetString(PyExc_TypeError, "a tuple of the types by value");
		return NULL;
	}
	Py_INCREF(arg);
	Py_XSETREF(event_types, arg);
	Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
	{"_set_event_types", mod_set_event_types, METH_O,
	 "_set_event_types(types, /)\n--\n\n"
	 "Event.type gives types[value] (inofd.EventType's members)."},
	{"strerror", mod_strerror, METH_O,
	 "strerror(errno, /)\n--\n\ninofd_strerror's text for errno."},
	{"library_version", mod_version, METH_NOARGS,
	 "library_version()\n--\n\n(major, minor) of the libinofd linked in."},
	{NULL}
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "inofd._inofd",
	.m_doc = "The C part of the inofd package (use inofd, not this).",
	.m_size = -1,
	.m_methods = module_methods,
};

#define C(x) { #x, (long long)(x) }
static const struct { const char *name; long long v; } constants[] = {
	C(IN_ACCESS), C(IN_MODIFY), C(IN_ATTRIB), C(IN_CLOSE_WRITE),
	C(IN_CLOSE_NOWRITE), C(IN_CLOSE), C(IN_OPEN), C(IN_MOVED_FROM),
	C(IN_MOVED_TO), C(IN_MOVE), C(IN_CREATE), C(IN_DELETE),
	C(IN_DELETE_SELF), C(IN_MOVE_SELF), C(IN_UNMOUNT), C(IN_Q_OVERFLOW),
	C(IN_IGNORED), C(IN_ONLYDIR), C(IN_DONT_FOLLOW), C(IN_EXCL_UNLINK),
	C(IN_MASK_CREATE), C(IN_MASK_ADD), C(IN_ISDIR), C(IN_ONESHOT),
	C(IN_ALL_EVENTS),
	{ "AT_SYMLINK_NOFOLLOW", INOFD_AT_SYMLINK_NOFOLLOW },
	{ "AT_EMPTY_PATH", INOFD_AT_EMPTY_PATH },
	{ "TREE_XDEV", INOFD_TREE_XDEV },
	{ "TREE_MEMBER_ENDS", INOFD_TREE_MEMBER_ENDS },
	{ "RAW_MOVES", INOFD_RAW_MOVES },
	{ "QUEUE_MAX", INOFD_QUEUE_MAX },
	{ "BACKEND_KERNEL", INOFD_BACKEND_KERNEL },
	{ "BACKEND_PROCFD", INOFD_BACKEND_PROCFD },
	{ "BACKEND_FANOTIFY", INOFD_BACKEND_FANOTIFY },
	{ "EV_INOTIFY", INOFD_EV_INOTIFY },
	{ "EV_RENAME", INOFD_EV_RENAME },
	{ "EV_MOVE_OUT", INOFD_EV_MOVE_OUT },
	{ "EV_MOVE_IN", INOFD_EV_MOVE_IN },
	{ "EV_RESCAN", INOFD_EV_RESCAN },
	{ "EV_CHANGED", INOFD_EV_CHANGED },
	{ "EV_ERROR", INOFD_EV_ERROR },
	{ "EVF_SYNTHETIC", INOFD_EVF_SYNTHETIC },
	{ "EVF_STALE_PATH", INOFD_EVF_STALE_PATH },
	{ "EVF_LOST", INOFD_EVF_LOST },
	{ "EVF_MEMBER", INOFD_EVF_MEMBER },
	{ "VERSION_MAJOR", INOFD_VERSION_MAJOR },
	{ "VERSION_MINOR", INOFD_VERSION_MINOR },
};

/* exported as well where PyMODINIT_FUNC does not say so (3.8) and
 * everything is built with -fvisibility=hidden */
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit__inofd(void)
{
	PyObject *m;
	size_t i;

	if (PyType_Ready(&Event_Type) < 0 || PyType_Ready(&Instance_Type) < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddType(m, &Event_Type) < 0 ||
	    PyModule_AddType(m, &Instance_Type) < 0)
		goto fail;
	for (i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		if (PyModule_AddIntConstant(m, constants[i].name,
					    (long)constants[i].v) < 0)
			goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
