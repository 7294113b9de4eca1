"""Unit tests of the contract's input rules (python -m unittest, in contenders/python)."""

import json
import os
import unittest

os.environ.setdefault("IOBOUND_CORPUS_FILES", "64")
import contract as c  # noqa: E402


class ContractTest(unittest.TestCase):
    def test_delays_are_decimal_and_bounded(self):
        self.assertEqual(c.delay_ms({"ms": "300"}), 300)
        for bad in [
            {},
            {"ms": ""},
            {"ms": "-1"},
            {"ms": "1.5"},
            {"ms": "abc"},
            {"ms": "60001"},
            {"ms": "9" * 23},
            {"ms": "+1"},
            {"ms": "١"},
        ]:
            with self.assertRaises(c.BadRequest, msg=bad):
                c.delay_ms(bad)

    def test_hash_ids_name_corpus_files_only(self):
        self.assertEqual(c.hash_request({"id": "63"}), (63, 0))
        self.assertEqual(c.hash_request({"id": "1", "delayMs": "300"}), (1, 300))
        for bad in [
            {"id": "64"},
            {"id": "-1"},
            {"id": "../../etc/passwd"},
            {"id": "1.bin"},
            {},
            {"id": "1", "delayMs": "soon"},
        ]:
            with self.assertRaises(c.BadRequest, msg=bad):
                c.hash_request(bad)
        self.assertTrue(c.corpus_path(7).endswith("/7.bin"))

    def test_keys_limits_ids(self):
        self.assertEqual(c.enrich_key({"key": "fast-abc_1"}), "fast-abc_1")
        for bad in [
            {},
            {"key": ""},
            {"key": "a b"},
            {"key": "été"},
            {"key": "k" * 65},
            {"key": "a\n"},
        ]:
            with self.assertRaises(c.BadRequest, msg=bad):
                c.enrich_key(bad)
        self.assertEqual(c.aggregate_keys({"keys": "a,b-1,C_2"}), ["a", "b-1", "C_2"])
        for bad in [
            {},
            {"keys": ""},
            {"keys": "a,,b"},
            {"keys": "a,../x"},
            {"keys": "k," * 16 + "k"},
        ]:
            with self.assertRaises(c.BadRequest, msg=str(bad)):
                c.aggregate_keys(bad)
        self.assertEqual(c.message_limit({}), 20)
        self.assertEqual(c.message_id("9223372036854775807"), 2**63 - 1)
        for bad in ["0", "-1", "abc", "9223372036854775808", "", "1" * 20]:
            with self.assertRaises(c.BadRequest, msg=bad):
                c.message_id(bad)

    def test_texts(self):
        self.assertEqual(c.message_text(b'{"text":"hi","other":1}'), "hi")
        self.assertEqual(
            len(c.message_text(('{"text":"%s"}' % ("é" * 1000)).encode())), 1000
        )
        for bad in [
            b'{"text":""}',
            b'{"text":5}',
            b'["text"]',
            b"nope",
            b'{"text":"a\\u0000b"}',
            b'{"text":"\\ud800"}',
            b"[" * 10000,
        ]:
            with self.assertRaises(c.BadRequest, msg=bad[:40]):
                c.message_text(bad)

    def test_both_json_libraries_read_and_write_alike(self):
        import importlib

        bodies = [
            b'{"text":"hi","other":1}',
            ('{"text":"%s"}' % ("\u00e9" * 3)).encode(),
            b'{"text":"caf\\u00e9"}',
            b'{"text":""}',
            b'{"text":"\\ud800"}',
            b'{"text":"a","n":NaN}',
            b"[" * 10000,
        ]
        rows = [{"id": 7, "text": "caf\u00e9 \u2603"}]
        seen = {}
        before = os.environ.get("IOBOUND_JSON")
        try:
            for lib in ("json", "orjson"):
                os.environ["IOBOUND_JSON"] = lib
                m = importlib.reload(c)
                answers = []
                for body in bodies:
                    try:
                        answers.append(m.message_text(body))
                    except m.BadRequest:
                        answers.append("400")
                written = m.json_bytes(rows)
                seen[lib] = (answers, m._loads(written))
        finally:
            if before is None:
                os.environ.pop("IOBOUND_JSON", None)
            else:
                os.environ["IOBOUND_JSON"] = before
            importlib.reload(c)
        # NaN is not JSON: the standard library reads it, orjson refuses it; either way the
        # body has a valid text, which only the standard library then accepts.
        json_answers, orjson_answers = seen["json"][0], seen["orjson"][0]
        self.assertEqual(json_answers[:5], orjson_answers[:5])
        self.assertEqual(
            json_answers[:5], ["hi", "\u00e9" * 3, "caf\u00e9", "400", "400"]
        )
        self.assertEqual((json_answers[5], orjson_answers[5]), ("a", "400"))
        self.assertEqual(json_answers[6], orjson_answers[6])
        self.assertEqual(seen["json"][1], rows)
        self.assertEqual(seen["orjson"][1], rows)

    def test_queries_and_paths(self):
        self.assertEqual(c.query("a=1&b=%41&a=2"), {"a": "1", "b": "A"})
        for bad in ["delayMs=%", "x=%zz"]:
            with self.assertRaises(c.BadRequest):
                c.query(bad)
        self.assertTrue(c.clean_path("/messages/1") and c.clean_path("/"))
        for bad in ["/a/../b", "//x", "/a/./b", "/a/"]:
            self.assertFalse(c.clean_path(bad), bad)


class RuntimeLineTest(unittest.TestCase):
    def test_the_line_is_json_after_its_prefix(self):
        from runtime_report import runtime_line

        line = runtime_line(192, "gthread threads", processes=1)
        prefix = "iobound-runtime "
        self.assertTrue(line.startswith(prefix))
        report = json.loads(line[len(prefix) :])
        self.assertEqual(report["cpus"], len(os.sched_getaffinity(0)))
        self.assertEqual(report["workers"], 192)
        self.assertEqual(report["workers_of"], "gthread threads")
        self.assertEqual(report["processes"], 1)


if __name__ == "__main__":
    unittest.main()
