// SPDX-License-Identifier: MIT
/* ptcollect dump FILE: one line per sideband record, or per trace packet (libipt). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "msg.h"
#include "out.h"
#include "sideband.h"

void usage_dump(FILE *f)
{
	fprintf(f,
		"usage: %s dump [--json] [--format pevent|pt] [--sample-type N] FILE\n\n"
		"Print one line per perf sideband record of a .pevent file (offset, type,\n"
		"fields, and the sample_id: pid/tid, time, cpu), or one line per packet of a\n"
		"raw Intel PT stream (.pt), decoded by libipt. The format comes from the file\n"
		"name, or from --format. A record that breaks libipt's size rules stops the\n"
		"dump with its offset (exit 2).\n", PTC_PROG);
}

struct mapped {
	uint8_t *p;
	size_t len;
};

static int map_file(const char *path, struct mapped *m)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	m->p = NULL;
	m->len = 0;
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	m->len = (size_t)st.st_size;
	if (m->len) {
		m->p = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m->p == MAP_FAILED) {
			int e = errno;

			close(fd);
			m->p = NULL;
			return -e;
		}
	}
	close(fd);
	return 0;
}

static int dump_pevent(const char *path, const struct mapped *m, uint64_t st)
{
	struct error e = { 0 };
	char desc[4400];
	size_t off = 0;
	int ret = 0;

	out_obj_begin(NULL, NULL);
	if (out_json) {
		out_str("file", NULL, path);
		out_hex("sample_type", NULL, st);
		out_arr_begin("records", NULL);
	}
	while (off < m->len) {
		struct sb_record r;
		const char *name;
		int n = sideband_parse(m->p, m->len, off, st, &r, &e);

		if (n < 0) {
			ret = n;
			break;
		}
		name = sideband_type_name(r.type);
		sideband_describe(&r, desc, sizeof(desc));
		if (out_json) {
			out_obj_begin(NULL, NULL);
			out_u64("offset", NULL, off);
			if (name)
				out_str("type", NULL, name);
			else
				out_u64("type", NULL, r.type);
			out_u64("size", NULL, r.size);
			out_u64("pid", NULL, r.sid.pid);
			out_u64("tid", NULL, r.sid.tid);
			out_u64s("time", NULL, r.sid.time);
			out_u64("cpu", NULL, r.sid.cpu);
			out_str("fields", NULL, desc);
			out_obj_end();
		} else {
			char type[32];

			snprintf(type, sizeof(type), "%s", name ? name : "");
			if (!name)
				snprintf(type, sizeof(type), "type %u", r.type);
			out_text("0x%08zx %-16s %s  [%u/%u cpu %u time %" PRIu64 "]", off, type, desc,
				 r.sid.pid, r.sid.tid, r.sid.cpu, r.sid.time);
		}
		off += (size_t)n;
	}
	if (out_json)
		out_arr_end();
	out_obj_end();
	out_finish();
	if (ret) {
		msg_err("dump: %s: %s", path, e.why);
		msg_hint("the records before offset %zu were printed; a .pevent written with another "
			 "sample_type needs --sample-type", off);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Packet names as ptdump prints them. */
static const char *packet_name(enum pt_packet_type t)
{
	switch (t) {
	case ppt_pad: return "pad";
	case ppt_psb: return "psb";
	case ppt_psbend: return "psbend";
	case ppt_fup: return "fup";
	case ppt_tip: return "tip";
	case ppt_tip_pge: return "tip.pge";
	case ppt_tip_pgd: return "tip.pgd";
	case ppt_tnt_8: return "tnt.8";
	case ppt_tnt_64: return "tnt.64";
	case ppt_mode: return "mode";
	case ppt_pip: return "pip";
	case ppt_vmcs: return "vmcs";
	case ppt_cbr: return "cbr";
	case ppt_tsc: return "tsc";
	case ppt_tma: return "tma";
	case ppt_mtc: return "mtc";
	case ppt_cyc: return "cyc";
	case ppt_stop: return "stop";
	case ppt_ovf: return "ovf";
	case ppt_mnt: return "mnt";
	case ppt_exstop: return "exstop";
	case ppt_mwait: return "mwait";
	case ppt_pwre: return "pwre";
	case ppt_pwrx: return "pwrx";
	case ppt_ptw: return "ptw";
	default: return "unknown";
	}
}

static int dump_pt(const char *path, const struct mapped *m)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	int ret, status = EXIT_OK, packets = 0;

	pt_config_init(&cfg);
	cfg.begin = m->p;
	cfg.end = m->p + m->len;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d) {
		msg_err("dump: %s: libipt could not make a packet decoder", path);
		return EXIT_RUNTIME;
	}
	out_obj_begin(NULL, NULL);
	if (out_json) {
		out_str("file", NULL, path);
		out_arr_begin("packets", NULL);
	}
	ret = pt_pkt_sync_forward(d);
	if (ret < 0)
		msg_warn("dump: %s: no PSB packet to synchronize on (%s)", path,
			 pt_errstr(pt_errcode(ret)));
	while (ret >= 0) {
		struct pt_packet pkt;
		uint64_t off = 0;

		pt_pkt_get_offset(d, &off);
		ret = pt_pkt_next(d, &pkt, sizeof(pkt));
		if (ret < 0) {
			if (ret == -pte_eos)
				break;
			/* libipt's way: say where, then resynchronize and go on. */
			msg_warn("dump: %s: at offset 0x%" PRIx64 ": %s", path, off,
				 pt_errstr(pt_errcode(ret)));
			status = EXIT_USAGE;
			ret = pt_pkt_sync_forward(d);
			continue;
		}
		packets++;
		if (out_json) {
			out_obj_begin(NULL, NULL);
			out_u64("offset", NULL, off);
			out_str("type", NULL, packet_name(pkt.type));
			out_u64("size", NULL, pkt.size);
			out_obj_end();
		} else {
			out_text("0x%08" PRIx64 " %-8s (%u bytes)", off, packet_name(pkt.type), pkt.size);
		}
	}
	if (out_json) {
		out_arr_end();
		out_u64("count", NULL, (uint64_t)packets);
	}
	out_obj_end();
	out_finish();
	pt_pkt_free_decoder(d);
	return status;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int do_dump(int argc, char **argv)
{
	enum { OPT_FORMAT = 256, OPT_SAMPLE_TYPE };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "sample-type", required_argument, NULL, OPT_SAMPLE_TYPE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL, *path;
	uint64_t st = SIDEBAND_SAMPLE_TYPE;
	struct mapped m;
	char *end;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage_dump(stdout);
			return EXIT_OK;
		case OPT_FORMAT:
			if (strcmp(optarg, "pevent") && strcmp(optarg, "pt"))
				return cmd_bad_usage("dump", "--format '%s': use pevent or pt", optarg);
			format = optarg;
			break;
		case OPT_SAMPLE_TYPE:
			errno = 0;
			st = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg)
				return cmd_bad_usage("dump", "--sample-type '%s' is not a number "
						     "(e.g. 0x10086)", optarg);
			break;
		case ':':
			return cmd_bad_usage("dump", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cmd_bad_usage("dump", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cmd_bad_usage("dump", "expected one FILE");
	path = argv[optind];
	if (!format) {
		if (ends_with(path, ".pevent"))
			format = "pevent";
		else if (ends_with(path, ".pt"))
			format = "pt";
		else
			return cmd_bad_usage("dump", "%s: cannot tell the format from the name "
					     "(.pevent or .pt); give --format", path);
	}
	ret = map_file(path, &m);
	if (ret) {
		msg_err("dump: %s: %s", path, ret == -EISDIR ? "not a regular file" : strerror(-ret));
		return EXIT_USAGE;
	}
	ret = !strcmp(format, "pevent") ? dump_pevent(path, &m, st) : dump_pt(path, &m);
	if (m.p)
		munmap(m.p, m.len);
	return ret;
}
