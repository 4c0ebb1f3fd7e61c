import ConfigFile
import FencepostJSON
import Testing

/// Valid documents and the JSON they must read as (keys in document order).
@Suite struct TOMLCorpusTests {
    static let corpus: [(name: String, toml: String, json: String)] = [
        ("empty", "", "{}"),
        ("only comments and blank lines", "# a comment\n\n   # another\t\n\n", "{}"),
        ("bare keys", "key = 1\nbare_key = 2\nbare-key = 3\n1234 = 4\n", #"{"key":1,"bare_key":2,"bare-key":3,"1234":4}"#),
        ("quoted keys", #""127.0.0.1" = "v""# + "\n" + #""character encoding" = 1"# + "\n" + #""ʎǝʞ" = 2"# + "\n'key2' = 3\n" + #"'quoted "value"' = 4"# + "\n\"\" = 5",
         #"{"127.0.0.1":"v","character encoding":1,"ʎǝʞ":2,"key2":3,"quoted \"value\"":4,"":5}"#),
        ("dotted keys", "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\nsite.\"google.com\" = true\n a . b . c = 1",
         #"{"name":"Orange","physical":{"color":"orange","shape":"round"},"site":{"google.com":true},"a":{"b":{"c":1}}}"#),
        ("tables", "[table-1]\nkey1 = \"some string\"\nkey2 = 123\n\n[table-2]\nkey1 = \"another string\"\nkey2 = 456\n",
         #"{"table-1":{"key1":"some string","key2":123},"table-2":{"key1":"another string","key2":456}}"#),
        ("header with spaces and quotes", "[ j . \"ʞ\" . 'l' ]\nx = 1", #"{"j":{"ʞ":{"l":{"x":1}}}}"#),
        ("implicit super-table defined later", "[x.y.z.w]\na = 1\n[x]\nb = 2", #"{"x":{"y":{"z":{"w":{"a":1}}},"b":2}}"#),
        ("sub-table under dotted keys", "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true",
         #"{"fruit":{"apple":{"color":"red","taste":{"sweet":true},"texture":{"smooth":true}}}}"#),
        ("empty table", "[empty]\n[other]\nk = 1", #"{"empty":{},"other":{"k":1}}"#),
        ("array of tables", """
            [[products]]
            name = "Hammer"
            sku = 738594937

            [[products]]  # empty table within the array

            [[products]]
            name = "Nail"
            sku = 284758393
            color = "gray"
            """,
         #"{"products":[{"name":"Hammer","sku":738594937},{},{"name":"Nail","sku":284758393,"color":"gray"}]}"#),
        ("nested arrays of tables", """
            [[fruits]]
            name = "apple"
            [fruits.physical]
            color = "red"
            [[fruits.varieties]]
            name = "red delicious"
            [[fruits.varieties]]
            name = "granny smith"
            [[fruits]]
            name = "banana"
            [[fruits.varieties]]
            name = "plantain"
            """,
         #"{"fruits":[{"name":"apple","physical":{"color":"red"},"varieties":[{"name":"red delicious"},{"name":"granny smith"}]},{"name":"banana","varieties":[{"name":"plantain"}]}]}"#),
        ("basic strings and escapes", #"s = "I'm a string. \"You can quote me\". Name\tJos\u00E9\nLocation\tSF.""#
            + "\n" + #"e = "\b\t\n\f\r\"\\""# + "\n" + #"u = "\u00e9\U0001F690""# + "\ntab = \"a\tb\"",
         #"{"s":"I'm a string. \"You can quote me\". Name\tJosé\nLocation\tSF.","e":"\b\t\n\f\r\"\\","u":"é🚐","tab":"a\tb"}"#),
        ("literal strings", #"winpath = 'C:\Users\nodejs\templates'"# + "\n" + #"regex = '<\i\c*\s*>'"# + "\nq = 'Tom \"Dubs\" Preston'",
         #"{"winpath":"C:\\Users\\nodejs\\templates","regex":"<\\i\\c*\\s*>","q":"Tom \"Dubs\" Preston"}"#),
        ("multi-line basic strings", "str1 = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n"
            + "str2 = \"\"\"\nThe quick brown \\\n\n\n  fox jumps over \\\n    the lazy dog.\"\"\"\n"
            + "str3 = \"\"\"Here are two quotation marks: \"\". Simple enough.\"\"\"\n"
            + "str4 = \"\"\"\"This,\" she said, \"is just a pointless statement.\"\"\"\"\n"
            + "str5 = \"\"\"a\\tb \\u00E9 \\\"\"\"\" \n",
         #"{"str1":"Roses are red\nViolets are blue","str2":"The quick brown fox jumps over the lazy dog.","str3":"Here are two quotation marks: \"\". Simple enough.","str4":"\"This,\" she said, \"is just a pointless statement.\"","str5":"a\tb é \""}"#),
        ("multi-line literal strings", "regex2 = '''I [dw]on't need \\d{2} apples'''\nlines = '''\nThe first newline is\ntrimmed in raw strings.\n   All other whitespace\n   is preserved.\n'''\nq = ''''That,' she said, 'is still pointless.''''",
         #"{"regex2":"I [dw]on't need \\d{2} apples","lines":"The first newline is\ntrimmed in raw strings.\n   All other whitespace\n   is preserved.\n","q":"'That,' she said, 'is still pointless.'"}"#),
        ("integers", "a = +99\nb = 42\nc = 0\nd = -17\ne = 1_000\nf = 5_349_221\ng = 1_2_3_4_5\nh = 0xDEADBEEF\ni = 0xdead_beef\nj = 0o01234567\nk = 0o755\nl = 0b11010110\nm = 9223372036854775807\nn = -9223372036854775808\no = 0x7FFFFFFFFFFFFFFF\np = -0\nq = +0",
         #"{"a":99,"b":42,"c":0,"d":-17,"e":1000,"f":5349221,"g":12345,"h":3735928559,"i":3735928559,"j":342391,"k":493,"l":214,"m":9223372036854775807,"n":-9223372036854775808,"o":9223372036854775807,"p":0,"q":0}"#),
        ("floats", "f1 = +1.0\nf2 = 3.1415\nf3 = -0.01\nf4 = 5e+22\nf5 = 1e06\nf6 = -2E-2\nf7 = 6.626e-34\nf8 = 224_617.445_991_228\nf9 = 0.0\nf10 = 1e1_0",
         #"{"f1":1.0,"f2":3.1415,"f3":-0.01,"f4":5e22,"f5":1e6,"f6":-0.02,"f7":6.626e-34,"f8":224617.445991228,"f9":0.0,"f10":1e10}"#),
        ("booleans", "t = true\nf = false", #"{"t":true,"f":false}"#),
        ("date-times kept as text", "odt1 = 1979-05-27T07:32:00Z\nodt2 = 1979-05-27T00:32:00-07:00\nodt3 = 1979-05-27T00:32:00.999999-07:00\nodt4 = 1979-05-27 07:32:00Z\nldt = 1979-05-27T07:32:00\nld = 1979-05-27\nlt = 00:32:00.999999\nleap = 2024-02-29",
         #"{"odt1":"1979-05-27T07:32:00Z","odt2":"1979-05-27T00:32:00-07:00","odt3":"1979-05-27T00:32:00.999999-07:00","odt4":"1979-05-27 07:32:00Z","ldt":"1979-05-27T07:32:00","ld":"1979-05-27","lt":"00:32:00.999999","leap":"2024-02-29"}"#),
        ("arrays", """
            integers = [ 1, 2, 3 ]
            colors = [ "red", "yellow", "green" ]
            nested_arrays_of_ints = [ [ 1, 2 ], [3, 4, 5] ]
            nested_mixed_array = [ [ 1, 2 ], ["a", "b", "c"] ]
            string_array = [ "all", 'strings', \"\"\"are the same\"\"\", '''type''' ]
            numbers = [ 0.1, 0.2, 0.5, 1, 2, 5 ]
            contributors = [
              "Foo Bar <foo@example.com>",
              { name = "Baz Qux", email = "bazqux@example.com", url = "https://example.com/bazqux" }
            ]
            integers2 = [
              1, 2, 3
            ]
            integers3 = [
              1,
              2, # this is ok
            ]
            empty = [ ]
            empty2 = [
              # only a comment
            ]
            """,
         #"{"integers":[1,2,3],"colors":["red","yellow","green"],"nested_arrays_of_ints":[[1,2],[3,4,5]],"nested_mixed_array":[[1,2],["a","b","c"]],"string_array":["all","strings","are the same","type"],"numbers":[0.1,0.2,0.5,1,2,5],"contributors":["Foo Bar <foo@example.com>",{"name":"Baz Qux","email":"bazqux@example.com","url":"https://example.com/bazqux"}],"integers2":[1,2,3],"integers3":[1,2],"empty":[],"empty2":[]}"#),
        ("inline tables", "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = { x = 1, y = 2 }\nanimal = { type.name = \"pug\" }\nempty = {}\nnested = { a = { b = [1, { c = 2 }] } }",
         #"{"name":{"first":"Tom","last":"Preston-Werner"},"point":{"x":1,"y":2},"animal":{"type":{"name":"pug"}},"empty":{},"nested":{"a":{"b":[1,{"c":2}]}}}"#),
        ("CRLF line endings and comments", "a = 1\r\n# c\r\n[t]\r\nb = \"\"\"x\r\ny\"\"\" # end\r\n",
         #"{"a":1,"t":{"b":"x\ny"}}"#),
        ("byte order mark", "\u{FEFF}a = 1", #"{"a":1}"#),
        ("comments after values and headers", "a = 1 # one\n[b] # table\nc = [1, # x\n 2] # y\n", #"{"a":1,"b":{"c":[1,2]}}"#),
        ("a fencepost config", """
            # Fencepost on the van
            [gpio]
            chip = "gpiochip0"
            buzzer = { pin = 18, active_low = false }
            led.pin = 23
            button = { pin = 24, debounce_ms = 30 }

            [gps]
            source = "serial:///dev/serial0?baud=9600"

            [[requests]]
            identifier = "water"
            content.title = "Drink water"
            trigger = { type = "interval", seconds = 7_200, repeats = true }

            [[requests]]
            identifier = "depot"
            content = { title = "Depot", sound = "chime" }
            trigger.type = "location"
            trigger.region = { center = [51.5007, -0.1246], radius = 150.0 }
            """,
         #"{"gpio":{"chip":"gpiochip0","buzzer":{"pin":18,"active_low":false},"led":{"pin":23},"button":{"pin":24,"debounce_ms":30}},"gps":{"source":"serial:///dev/serial0?baud=9600"},"requests":[{"identifier":"water","content":{"title":"Drink water"},"trigger":{"type":"interval","seconds":7200,"repeats":true}},{"identifier":"depot","content":{"title":"Depot","sound":"chime"},"trigger":{"type":"location","region":{"center":[51.5007,-0.1246],"radius":150.0}}}]}"#),
    ]

    @Test(arguments: 0..<corpus.count)
    func parsesToExpectedJSON(index: Int) throws {
        let entry = Self.corpus[index]
        let table: TOMLTable
        do { table = try TOML.parse(entry.toml) } catch {
            Issue.record("\(entry.name): \(error)")
            return
        }
        let expected = try JSONValue.parse(entry.json)
        #expect(table.json == expected, "\(entry.name): got \(table.json)")
    }

    @Test func infAndNan() throws {
        let t = try TOML.parse("a = inf\nb = +inf\nc = -inf\nd = nan\ne = +nan\nf = -nan")
        #expect(t["a"]?.float == .infinity && t["b"]?.float == .infinity && t["c"]?.float == -.infinity)
        for k in ["d", "e", "f"] { #expect(t[k]?.float?.isNaN == true, "\(k)") }
    }

    @Test func kindsAreKept() throws {
        let t = try TOML.parse("i = 1\nf = 1.0\nd = 1979-05-27\ns = \"1\"\nb = true")
        #expect(t["i"]?.kind == .integer(1))
        #expect(t["f"]?.kind == .float(1))
        #expect(t["d"]?.kind == .dateTime("1979-05-27"))
        #expect(t["s"]?.kind == .string("1"))
        #expect(t["b"]?.kind == .boolean(true))
    }

    @Test func everyValueRemembersItsLineAndColumn() throws {
        let text = """
            # header comment
            top = 1
            [gpio]
            chip = "gpiochip0"

            buzzer.pin = 18
            arr = [
              1,
                "two",
            ]
            [[req]]
            x = { a = 1 }
            [[req]]
            """
        let t = try TOML.parse(text)
        func at(_ path: [String]) -> (Int, Int)? { t.value(at: path).map { ($0.line, $0.column) } }
        #expect(at(["top"])! == (2, 7))
        #expect(at(["gpio"])! == (3, 1))
        #expect(at(["gpio", "chip"])! == (4, 8))
        #expect(at(["gpio", "buzzer"])! == (6, 1))      // created by the dotted key
        #expect(at(["gpio", "buzzer", "pin"])! == (6, 14))
        let arr = t.value(at: ["gpio", "arr"])!
        #expect((arr.line, arr.column) == (7, 7))
        #expect(arr.array!.map { ($0.line, $0.column) }.elementsEqual([(8, 3), (9, 5)], by: ==))
        let req = t["req"]!
        #expect(req.line == 11)
        #expect(req.array!.map(\.line) == [11, 13])
        #expect(req.array![0].table!["x"]!.line == 12)
        #expect(req.array![0].table!["x"]!.column == 5)
        #expect(req.array![0].table!["x"]!.table!["a"]!.column == 11)
    }

    @Test func implicitTableTakesTheLineOfItsLaterDefinition() throws {
        let t = try TOML.parse("[a.b]\nx = 1\n\n[a]\ny = 2")
        #expect(t["a"]?.line == 4)
        #expect(t.value(at: ["a", "b"])?.line == 1)
    }
}
