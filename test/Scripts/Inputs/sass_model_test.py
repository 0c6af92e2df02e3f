"""scripts/sass_model.py on machine-code listings written by hand, in
nvdisasm's format, each shaped after what ptxas emits for the case."""

import os
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1))  # the scripts/ folder
import sass_costs  # noqa: E402
import sass_model  # noqa: E402


def listing(name, lines):
    """A kernel section of `lines`: (label or None, instruction text)."""
    out = [".text.%s:" % name]
    for address, (label, text) in enumerate(lines):
        if label:
            out.append("%s:" % label)
        out.append("        /*%04x*/                   %s ;" % (address * 16, text))
    return "\n".join(out) + "\n"


def kernel(lines, name="k"):
    body = sass_model.parse_listing(listing(name, lines))[name]
    return body, sass_model.loops(body)


# A counted loop: R2 from 0 by 1 while R2 < 16, compared after the step.
COUNTED = [
    (None, "MOV R2, 0x0"),
    (".L_x_0", "IADD3 R2, R2, 0x1, RZ"),
    (None, "FFMA R4, R5, R6, R4"),
    (None, "ISETP.GE.AND P0, PT, R2, 0x10, PT"),
    (None, "@!P0 BRA `(.L_x_0)"),
    (None, "EXIT"),
]

# One stage of a tiled kernel: a loop over a run-time count (a kernel
# parameter) that gathers (schedule slot -> table entry -> feature), stores
# to shared memory in an inner loop of 4 steps, waits at a barrier and runs
# two MMAs from ldmatrix loads.
STAGE = [
    (None, "S2R R0, SR_TID.X"),
    (".L_x_0", "IMAD.MOV.U32 R8, RZ, RZ, 0x0"),
    (".L_x_1", "LDG.E R10, [R20.64]"),
    (None, "IMAD.WIDE R12, R10, 0x6c, R30"),
    (None, "LDG.E R14, [R12.64]"),
    (None, "IMAD.WIDE.U32 R16, R14, 0x80, R32"),
    (None, "LDG.E.U16 R18, [R16.64]"),
    (None, "IADD3 R20, P1, R20, 0x20, RZ"),
    (None, "IMAD.X R21, RZ, RZ, R21, P1"),
    (None, "STS.U16 [R40], R18"),
    (None, "IADD3 R8, R8, 0x1, RZ"),
    (None, "ISETP.NE.AND P2, PT, R8, 0x4, PT"),
    (None, "@P2 BRA `(.L_x_1)"),
    (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
    (None, "LDSM.16.M88.4 R44, [R42]"),
    (None, "LDSM.16.MT88.4 R48, [R43]"),
    (None, "HMMA.16816.F32 R52, R44, R48, R52"),
    (None, "HMMA.16816.F32 R56, R44, R50, R56"),
    (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
    (None, "IADD3 R6, R6, 0x1, RZ"),
    (None, "ISETP.GE.U32.AND P0, PT, R6, c[0x0][0x160], PT"),
    (None, "@!P0 BRA `(.L_x_0)"),
    (None, "EXIT"),
]


# A tiled kernel: a grid-stride loop over tiles (run-time bound), inside it
# the offsets (run-time here), inside those three channel slices, each
# staging, a barrier, an MMA, a barrier; an epilogue barrier per tile.
TILED = [
    (".L_x_0", "IMAD.MOV.U32 R8, RZ, RZ, 0x0"),
    (".L_x_1", "IMAD.MOV.U32 R9, RZ, RZ, 0x0"),
    (".L_x_2", "LDS R10, [R40]"),
    (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
    (None, "HMMA.16816.F32 R52, R44, R48, R52"),
    (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
    (None, "IADD3 R9, R9, 0x1, RZ"),
    (None, "ISETP.NE.AND P2, PT, R9, 0x3, PT"),
    (None, "@P2 BRA `(.L_x_2)"),
    (None, "IADD3 R8, R8, 0x1, RZ"),
    (None, "ISETP.GE.U32.AND P1, PT, R8, c[0x0][0x168], PT"),
    (None, "@!P1 BRA `(.L_x_1)"),
    (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
    (None, "IADD3 R6, R6, 0x1, RZ"),
    (None, "ISETP.GE.U32.AND P0, PT, R6, c[0x0][0x160], PT"),
    (None, "@!P0 BRA `(.L_x_0)"),
    (None, "EXIT"),
]


def pipelined(depth):
    """A stage that copies its rows with cp.async from addresses read from
    shared memory, commits a group and waits for all but `depth` groups."""
    return [
        (".L_x_0", "LDS R10, [R40]"),
        (None, "IMAD.WIDE.U32 R12, R10, 0x80, R32"),
        (None, "LDGSTS.E.BYPASS.128 [R41], desc[UR6][R12.64]"),
        (None, "LDGDEPBAR"),
        (None, "DEPBAR.LE SB0, 0x%x" % depth),
        (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
        (None, "LDSM.16.M88.4 R44, [R42]"),
        (None, "LDSM.16.MT88.4 R48, [R43]"),
        (None, "HMMA.16816.F32 R52, R44, R48, R52"),
        (None, "HMMA.16816.F32 R56, R44, R50, R56"),
        (None, "IADD3 R6, R6, 0x1, RZ"),
        (None, "ISETP.GE.U32.AND P0, PT, R6, c[0x0][0x160], PT"),
        (None, "@!P0 BRA `(.L_x_0)"),
        (None, "EXIT"),
    ]


class Parsing(unittest.TestCase):
    def test_branch_targets_resolve_through_labels(self):
        body, found = kernel(COUNTED)
        self.assertEqual(body[4].target, 0x10)
        self.assertEqual([(l.start, l.end) for l in found], [(0x10, 0x40)])

    def test_sm90_memory_operands(self):
        body, _ = kernel([(None, "LDG.E R9, desc[UR6][R4.64+0x8]")])
        self.assertEqual(sass_model.address_registers(body[0]), [4, 5])

    def test_widths_of_written_registers(self):
        body, _ = kernel([(None, "IMAD.WIDE R8, R9, 0x6c, R116"),
                          (None, "LDSM.16.M88.4 R44, [R42]"),
                          (None, "HMMA.16816.F32 R52, R44, R48, R52"),
                          (None, "STS.U16 [R77], R22")])
        self.assertEqual([sass_model.writes(i) for i in body],
                         [[8, 9], [44, 45, 46, 47], [52, 53, 54, 55], []])


class TripCounts(unittest.TestCase):
    def test_counted_loop(self):
        body, found = kernel(COUNTED)
        self.assertEqual(sass_model.trip_count(body, found[0]), (16, True))

    def test_compare_before_the_step(self):
        lines = list(COUNTED)
        lines[1], lines[3] = (".L_x_0", "ISETP.GE.AND P0, PT, R2, 0xf, PT"), \
            (None, "IADD3 R2, R2, 0x1, RZ")
        body, found = kernel(lines)
        # R2 = 0..15 compared before each step: 16 trips, the last at 15.
        self.assertEqual(sass_model.trip_count(body, found[0]), (16, True))

    def test_wide_compare_reads_the_low_half(self):
        lines = COUNTED[:3] + [
            (None, "ISETP.GE.U32.AND P0, PT, R2, 0x10, PT"),
            (None, "ISETP.GE.U32.AND.EX P0, PT, R3, RZ, PT, P0"),
        ] + COUNTED[4:]
        body, found = kernel(lines)
        self.assertEqual(sass_model.trip_count(body, found[0]), (16, True))

    def test_guarded_exit_before_an_unconditional_latch(self):
        lines = COUNTED[:3] + [
            (None, "ISETP.GE.AND P4, PT, R2, 0x10, PT"),
            (None, "@P4 CALL.REL.NOINC `(.L_x_9)"),
            (None, "BRA `(.L_x_0)"),
            (".L_x_9", "EXIT"),
        ]
        body, found = kernel(lines)
        self.assertEqual(sass_model.trip_count(body, found[0]), (16, True))

    def test_uniform_counter_through_a_predicate_copy(self):
        # The slice loop of a tiled kernel on the uniform datapath.
        lines = [
            (None, "UMOV UR4, URZ"),
            (".L_x_0", "UIADD3 UR4, UP2, UR4, 0x10, URZ"),
            (None, "UISETP.GE.U32.AND UP2, UPT, UR4, 0x40, UPT"),
            (None, "UISETP.GE.U32.AND.EX UP2, UPT, UR5, URZ, UPT, UP2"),
            (None, "PLOP3.LUT P0, PT, PT, PT, UP2, 0x80, 0x0"),
            (None, "FFMA R4, R5, R6, R4"),
            (None, "@P0 CALL.REL.NOINC `(.L_x_9)"),
            (None, "BRA `(.L_x_0)"),
            (".L_x_9", "EXIT"),
        ]
        body, found = kernel(lines)
        self.assertEqual(sass_model.trip_count(body, found[0]), (4, True))

    def test_uniform_counter_through_a_negated_copy(self):
        # The same, the copy negated (LUT 0x40) and the exit on its
        # negation: the loop still ends when the counter reaches 0x40.
        lines = [
            (None, "UMOV UR4, URZ"),
            (".L_x_0", "UIADD3 UR4, UP2, UR4, 0x10, URZ"),
            (None, "UISETP.GE.U32.AND UP2, UPT, UR4, 0x40, UPT"),
            (None, "PLOP3.LUT P3, PT, PT, PT, UP2, 0x40, 0x0"),
            (None, "FFMA R4, R5, R6, R4"),
            (None, "@!P3 CALL.REL.NOINC `(.L_x_9)"),
            (None, "BRA `(.L_x_0)"),
            (".L_x_9", "EXIT"),
        ]
        body, found = kernel(lines)
        self.assertEqual(sass_model.trip_count(body, found[0]), (4, True))

    def test_unknown_start_is_an_estimate_from_zero(self):
        lines = [(None, "IMAD.MOV.U32 R2, RZ, RZ, R7")] + COUNTED[1:]
        body, found = kernel(lines)
        self.assertEqual(sass_model.trip_count(body, found[0]), (16, False))

    def test_parameter_bound_is_unknown(self):
        body, found = kernel(STAGE)
        outer = [l for l in found if l.parent is None][0]
        self.assertEqual(sass_model.trip_count(body, outer), (None, False))


class Profile(unittest.TestCase):
    def test_stage(self):
        body, found = kernel(STAGE)
        hot = sass_model.hot_loop(body, found)
        self.assertEqual((hot.start, hot.end), (0x10, 0x150))
        counts = sass_model.profile(body, hot, found)
        # 11 inner instructions x 4 trips + 10 outside the inner loop.
        self.assertEqual(counts["instructions"], 11 * 4 + 10)
        self.assertEqual(counts["mma"], 2)
        self.assertEqual(counts["mma_flop"], 2 * 4096)
        self.assertEqual(counts["global_load"], 12)
        self.assertEqual(counts["global_load_bytes"], 4 * (4 + 4 + 2))
        self.assertEqual(counts["shared_store"], 4)
        self.assertEqual(counts["shared_load"], 2)
        self.assertEqual(counts["barrier"], 2)
        self.assertEqual(counts["wide_index"], 4)
        self.assertEqual(counts["load_chain"], 3)
        self.assertEqual(counts["pipeline_depth"], 0)
        self.assertFalse(counts["estimated"])
        # Shared pipe: 4 STS.U16 (one wavefront each) + 2 LDSM.x4 (4 each).
        self.assertEqual(counts["shared_waves"], 4 + 8)

    def test_a_step_is_one_offset_of_a_tile(self):
        body, found = kernel(TILED)
        hot = sass_model.hot_loop(body, found)
        self.assertEqual((hot.start, hot.end), (0x10, 0xb0))
        counts = sass_model.profile(body, hot, found)
        # Three slices of 7 instructions, and 4 for the offset loop.
        self.assertEqual(counts["instructions"], 3 * 7 + 4)
        self.assertEqual((counts["mma"], counts["barrier"]), (3, 6))

    def test_pipelined_stage(self):
        body, found = kernel(pipelined(2))
        hot = sass_model.hot_loop(body, found)
        counts = sass_model.profile(body, hot, found)
        self.assertEqual(counts["load_chain"], 1)  # addresses from shared memory
        self.assertEqual(counts["async_copy"], 1)
        self.assertEqual(counts["pipeline_depth"], 2)
        # LDS, 512 bytes copied, two ldmatrix x4.
        self.assertEqual(counts["shared_waves"], 1 + 4 + 8)

    def test_padding_takes_issue_slots_only(self):
        lines = pipelined(2)
        lines[2:2] = [(None, "@!PT LDS RZ, [RZ]")] * 3
        body, found = kernel(lines)
        counts = sass_model.profile(body, sass_model.hot_loop(body, found), found)
        self.assertEqual(counts["instructions"], len(lines) - 1)
        self.assertEqual(counts["shared_load"], 3)  # LDS, LDSM x 2
        self.assertEqual(counts["shared_waves"], 1 + 4 + 8)

    def test_the_copying_loop_is_hot(self):
        # A tile loop holding a pipelined step loop (cp.async) and, after
        # it, a larger fallback step loop (loads and stores) for unaligned
        # data: the pipeline is the step aligned data takes.
        copying = [(label, text) for label, text in pipelined(0)[:-1]]
        copying[0] = (".L_x_1", copying[0][1])
        copying[-1] = (None, "@!P0 BRA `(.L_x_1)")
        fallback = [(".L_x_2", "LDG.E.128 R12, [R20.64]"),
                    (None, "STS.128 [R41], R12"),
                    (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
                    (None, "LDSM.16.M88.4 R44, [R42]"),
                    (None, "LDSM.16.MT88.4 R48, [R43]"),
                    (None, "HMMA.16816.F32 R52, R44, R48, R52"),
                    (None, "HMMA.16816.F32 R56, R44, R50, R56"),
                    (None, "BAR.SYNC.DEFER_BLOCKING 0x0"),
                    (None, "NOP"), (None, "NOP"), (None, "NOP"), (None, "NOP"),
                    (None, "IADD3 R7, R7, 0x1, RZ"),
                    (None, "ISETP.GE.U32.AND P1, PT, R7, c[0x0][0x164], PT"),
                    (None, "@!P1 BRA `(.L_x_2)")]
        tile = ([(".L_x_0", "IMAD.MOV.U32 R8, RZ, RZ, 0x0")] + copying + fallback +
                [(None, "IADD3 R5, R5, 0x1, RZ"),
                 (None, "ISETP.GE.U32.AND P2, PT, R5, c[0x0][0x168], PT"),
                 (None, "@!P2 BRA `(.L_x_0)"), (None, "EXIT")])
        body, found = kernel(tile)
        hot = sass_model.hot_loop(body, found)
        self.assertEqual((hot.start, hot.end), (0x10, 0x10 * len(copying)))
        self.assertEqual(sass_model.profile(body, hot, found)["async_copy"], 1)

    def test_pipelining_hides_the_copies_latency(self):
        costs = sass_costs.CHIPS["sm_80"]
        exposed = [sass_model.simulate(*self.stage(pipelined(d)), costs) for d in (0, 2)]
        self.assertGreater(exposed[0], costs["latency"]["global"])
        self.assertLess(exposed[1], costs["latency"]["global"] / 2)

    def stage(self, lines):
        body, found = kernel(lines)
        return body, sass_model.hot_loop(body, found), found

    def test_serial_chain_costs_its_latencies(self):
        costs = sass_costs.CHIPS["sm_80"]
        cycles = sass_model.simulate(*self.stage(STAGE), costs)
        # Four inner steps, each three dependent global loads.
        self.assertGreaterEqual(cycles, 4 * 3 * costs["latency"]["global"])

    def test_mma_shapes(self):
        body, _ = kernel([(None, "HMMA.16816.F32 R52, R44, R48, R52"),
                          (None, "HMMA.1684.F32.TF32 R52, R44, R48, R52"),
                          (None, "HMMA.16816.F32.BF16 R52, R44, R48, R52"),
                          (None, "HGMMA.64x64x16.F32 R24, gdesc[UR4], R24")])
        self.assertEqual([sass_model.mma_flops(i) for i in body],
                         [(4096, "f16", False), (1024, "tf32", False),
                          (4096, "bf16", False), (131072 // 4, "f16", True)])

    def test_pipes(self):
        body, found = kernel(STAGE)
        counts = sass_model.profile(body, sass_model.hot_loop(body, found), found)
        pipes = sass_model.pipe_cycles(counts, sass_costs.CHIPS["sm_80"], warps=8)
        self.assertEqual(pipes["issue"], 54 * 8 / 4)
        # 2 HMMA x 4096 FLOP x 8 warps at 512 FLOP per cycle per SMSP x 4.
        self.assertEqual(pipes["mma"], 2 * 4096 * 8 / (512 * 4))
        self.assertEqual(pipes["shared"], 12 * 8)


if __name__ == "__main__":
    unittest.main(argv=[os.path.basename(__file__)])
