"""Disagreement cues of the languages Ankita reads besides English, glossed into the English
words the rules already know (data only; written for this project, see docs/languages.md).

A gloss maps a word of a language to the English token(s) the rules read: a negation becomes
"not", "aufgehört" becomes "stopped", "wohne" becomes "live", "मेरी" becomes "my". Words that
are no cue keep their own (stemmed) form, so the rules compare them as they compare English
content words. An empty gloss drops the word (a function word the stop lists lack).
"""

from __future__ import annotations

# English, the language the rules are written in.
NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "nobody",
        "none",
        "nothing",
        "nowhere",
        "neither",
        "nor",
        "without",
        "noone",
    }
)

# Function words: grammar, no content of their own.
FUNCTION_WORDS = (
    frozenset(
        """
a an the and or but if so as of at by for from in into on onto to with within about above
after again against all am are was were be been being is it its it's itself this that these
those there here then than too very can could would should will shall may might must do does
did doing done have has had having get gets got getting i me my mine myself we us our ours
ourselves you your yours yourself he him his himself she her hers herself they them their
theirs themselves what which who whom whose when where why how each every both few more most
other some such only own same just also really actually basically quite pretty rather
any anyone someone something anything everything one's let
well yes yeah oh ok hi hello thanks thank sure maybe perhaps probably definitely
still even ever because while though although up down out over off
hey wow lol haha hmm ah um uh omg yay oops whoa
""".split()
    )
    | NEGATIONS
)

# Generic filler of personal facts: the seed's list ("use", "database", "project", "stuff")
# and words that only say what sort of thing follows ("my browser is X" ~ "I use X").
FILLER_WORDS = frozenset(
    """
use uses used using usage database databases db project projects stuff thing things kind sort
lot lots bit app apps application software tool tools browser editor ide os distro system
called named name names please currently usually generally typically like prefer prefers
preferred preference take takes taking took much many
""".split()
)

STOP_WORDS = FUNCTION_WORDS | FILLER_WORDS


def _table(spec: str) -> dict[str, str]:
    """`"english: word word; english: word"` -> {word: english}; "_" stands for a drop."""
    out: dict[str, str] = {}
    for part in spec.split(";"):
        if part.strip():
            gloss, words = part.split(":", 1)
            for word in words.split():
                out[word] = "" if gloss.strip() == "_" else gloss.strip().replace("+", " ")
    return out


# Kinship and pets are shared shapes: "my <person>" is a subject of its own (PEOPLE).
GLOSS: dict[str, dict[str, str]] = {
    "de": _table("""
        i: ich; my: mein meine meinen meinem meiner meines; me: mich mir; am: bin; is: ist; not:
        nicht nie niemals; no: kein keine keinen keinem keiner keines; stopped: aufgehört
        aufgegeben; started: angefangen begonnen; moved: umgezogen; switched: gewechselt; now:
        jetzt nun inzwischen; again: wieder; like: mag mögen gern gerne; love: liebe; hate: hasse;
        live: wohne wohnt lebe lebt; home: zuhause wohnung; work: arbeite arbeitet; called: heiße
        heißt heisse heisst; name: name; have: habe hat; sister: schwester; brother: bruder;
        mother: mutter mama; father: vater papa; wife: frau; husband: mann; son: sohn; daughter:
        tochter; friend: freund freundin; dog: hund; cat: katze; _: zu von als; use: benutze
        benutzt nutze verwende; also: auch; pets: haustier haustiere; neighbor: nachbar nachbarin;
        colleague: kollege kollegin; boss: chef chefin; partner: partner partnerin; child: kind
        kinder; parents: eltern; car: auto; prefer: bevorzuge lieber; browser: browser; app: app;
        database: datenbank; project: projekt; years: jahre jahr"""),
    "es": _table("""
        i: yo; my: mi mis; me: me; am: soy estoy; is: es está; not: no nunca jamás tampoco;
        stopped: dejé dejado deje dejó; started: empecé comencé; moved: mudé mudado; switched:
        cambié; now: ahora; again: nuevo; like: gusta gustan; love: encanta encantan amo; hate:
        odio; live: vivo vive; home: casa; work: trabajo trabaja; called: llama llamo; name:
        nombre; have: tengo tiene; sister: hermana; brother: hermano; mother: madre mamá; father:
        padre papá; wife: esposa mujer; husband: esposo marido; son: hijo; daughter: hija; friend:
        amigo amiga; dog: perro; cat: gato; _: se de como; use: uso usa utilizo; also: también;
        pets: mascota mascotas; neighbor: vecino vecina; colleague: colega compañero compañera;
        boss: jefe jefa; partner: pareja novio novia; child: niño niña hijos; parents: padres;
        car: coche carro; prefer: prefiero; browser: navegador; app: aplicación app; project:
        proyecto; years: años"""),
    "fr": _table("""
        i: je j; my: mon ma mes; me: moi m; am: suis; is: est; not: ne n jamais aucun aucune; _:
        pas s l d qu c t comme; stopped: arrêté arrête; started: commencé; moved: déménagé;
        switched: changé; now: maintenant; again: nouveau; like: aime; love: adore; hate: déteste;
        live: habite vis vit; home: maison; work: travaille; called: appelle; name: nom prénom;
        have: ai a; sister: sœur soeur; brother: frère; mother: mère maman; father: père papa;
        wife: femme épouse; husband: mari; son: fils; daughter: fille; friend: ami amie; dog:
        chien; cat: chat; use: utilise; also: aussi également; pets: animal animaux; neighbor:
        voisin voisine; colleague: collègue; boss: patron patronne chef; partner: copain copine
        conjoint; child: enfant enfants; parents: parents; car: voiture; prefer: préfère; browser:
        navigateur; app: application appli; project: projet; years: ans"""),
    "pt": _table("""
        i: eu; my: meu minha meus minhas; me: me; am: sou estou; is: é está fica; not: não nao
        nunca jamais nem; stopped: parei deixei; started: comecei; moved: mudei; switched:
        troquei; now: agora; again: novamente; like: gosto gosta; love: adoro amo; hate: odeio;
        live: moro mora vivo vive; home: casa; work: trabalho trabalha; called: chama chamo; name:
        nome; have: tenho tem; sister: irmã; brother: irmão; mother: mãe; father: pai; wife:
        esposa mulher; husband: marido; son: filho; daughter: filha; friend: amigo amiga; dog:
        cachorro cão; cat: gato; _: se de da do como; use: uso usa utilizo; also: também; pets:
        animais estimação; neighbor: vizinho vizinha; colleague: colega; boss: chefe; partner:
        namorado namorada; child: criança filhos; parents: pais; car: carro; prefer: prefiro;
        browser: navegador; app: aplicativo app; project: projeto; years: anos"""),
    "it": _table("""
        i: io; my: mio mia miei mie; me: mi; am: sono; is: è; not: non mai nessun nessuno;
        stopped: smesso smetto; started: iniziato cominciato; moved: trasferito trasferita;
        switched: cambiato; now: ora adesso; again: nuovo; like: piace piacciono; love: amo adoro;
        hate: odio; live: abito abita vivo vive; home: casa; work: lavoro lavora; called: chiama
        chiamo; name: nome; have: ho ha; sister: sorella; brother: fratello; mother: madre mamma;
        father: padre papà; wife: moglie; husband: marito; son: figlio; daughter: figlia; friend:
        amico amica; dog: cane; cat: gatto; _: si di l come; use: uso usa utilizzo; also: anche;
        pets: animali domestici; neighbor: vicino vicina; colleague: collega; boss: capo; partner:
        ragazzo ragazza compagno compagna; child: bambino bambina figli; parents: genitori; car:
        macchina auto; prefer: preferisco; browser: browser; app: app; project: progetto; years:
        anni"""),
    "nl": _table("""
        i: ik; my: mijn; me: mij me; am: ben; is: is; not: niet nooit; no: geen; stopped: gestopt
        stopte; started: begonnen; moved: verhuisd; switched: overgestapt; now: nu; again: weer
        opnieuw; like: hou houd; love: dol; hate: haat; live: woon woont; home: huis thuis; work:
        werk werkt; called: heet; name: naam; have: heb heeft; sister: zus zuster; brother: broer;
        mother: moeder; father: vader; wife: vrouw; husband: man; son: zoon; daughter: dochter;
        friend: vriend vriendin; dog: hond; cat: kat; _: van als met; use: gebruik gebruikt; also:
        ook; pets: huisdier huisdieren; neighbor: buurman buurvrouw; colleague: collega; boss:
        baas; partner: partner vriendje vriendinnetje; child: kind kinderen; parents: ouders; car:
        auto; prefer: liever; browser: browser; app: app; project: project; years: jaar"""),
    "ru": _table("""
        i: я; my: мой моя мое мои моего моей мою моим моих; me: мне меня; not: не нет ни никогда;
        stopped: бросил бросила перестал перестала; started: начал начала; moved: переехал
        переехала; switched: перешел перешла; now: теперь сейчас; again: снова опять; like:
        нравится; love: люблю любит; hate: ненавижу; live: живу живет; home: дом; work: работаю
        работает; called: зовут; name: имя; have: есть; sister: сестра сестру сестры; brother:
        брат; mother: мама мать; father: папа отец; wife: жена; husband: муж; son: сын; daughter:
        дочь; friend: друг подруга; dog: собака собаку; cat: кошка кот; use: пользуюсь использую;
        also: тоже также еще; pets: домашних животных питомец питомцев; neighbor: сосед соседа
        соседка; colleague: коллега; boss: начальник; partner: парень девушка; child: ребенок
        дети; parents: родители; car: машина; prefer: предпочитаю; browser: браузер; app:
        приложение; project: проект; years: лет года год"""),
    "id": _table("""
        i: saya aku; not: tidak tak bukan belum nggak gak enggak; stopped: berhenti; started:
        mulai; moved: pindah; now: sekarang; again: lagi; like: suka; love: cinta; hate: benci;
        live: tinggal; home: rumah; work: bekerja kerja; called: bernama; name: nama; have: punya;
        sister: kakak adik; brother: abang; mother: ibu; father: ayah bapak; wife: istri; husband:
        suami; son: putra; daughter: putri; friend: teman; dog: anjing; cat: kucing; _: sudah
        sebagai seorang; use: pakai memakai menggunakan; also: juga; pets: peliharaan; neighbor:
        tetangga; colleague: rekan; boss: bos atasan; partner: pacar; child: anak; car: mobil;
        browser: browser peramban; app: aplikasi; project: proyek; years: tahun"""),
    "hi": _table("""
        i: मैं मैंने; my: मेरा मेरी मेरे; me: मुझे मुझको; not: नहीं नही न मत ना; am: हूं हूँ; is:
        है हैं; quit: छोड़ छोड; stopped: बंद; started: शुरू; moved: शिफ्ट; now: अब; again: फिर;
        like: पसंद; love: प्यार; hate: नफरत; live: रहता रहती रहते; home: घर; work: काम; name: नाम;
        sister: बहन; brother: भाई; mother: मां माँ माता; father: पिता पापा; wife: पत्नी; husband:
        पति; son: बेटा; daughter: बेटी; friend: दोस्त; dog: कुत्ता कुत्ते; cat: बिल्ली; drink:
        पीता पीती पीते पीना; eat: खाता खाती खाते खाना; read: पढ़ता पढ़ती पढ़ते; watch: देखता देखती
        देखते; go: जाता जाती जाते; play: खेलता खेलती खेलते; _: दिया दी दिए एक से हर; use: इस्तेमाल
        उपयोग; also: भी; pets: पालतू; neighbor: पड़ोसी; colleague: सहकर्मी; boss: बॉस; child:
        बच्चा बच्चे; parents: माता-पिता; car: कार गाड़ी; browser: ब्राउज़र ब्राउजर; app: ऐप;
        project: प्रोजेक्ट; years: साल वर्ष"""),
    "hi-latn": _table("""
        i: main mai maine; my: mera meri mere; me: mujhe mujhko; not: nahi nahin nai nhi na mat;
        am: hoon hun hu; is: hai hain; quit: chhod chod chhoda choda; stopped: band; started:
        shuru; moved: shift; now: ab; again: phir fir; like: pasand; love: pyaar pyar; hate:
        nafrat; live: rehta rehti rehte rahta rahti; home: ghar; work: kaam; name: naam; sister:
        behen bahen behan; brother: bhai; mother: maa mummy; father: papa pitaji; wife: biwi
        patni; husband: pati; son: beta; daughter: beti; friend: dost; dog: kutta; cat: billi;
        drink: peeta peeti peete peena pita; eat: khata khati khate khana; read: padhta padhti
        padhte; watch: dekhta dekhti dekhte; play: khelta khelti khelte; go: jata jati jate; _: ka
        ki ke ko mein me se pe par aur toh to diya di ek bahut karta karti karte karne karna tha
        thi the raha rahi har; use: use; also: bhi; pets: pet pets; neighbor: padosi; colleague:
        colleague; boss: boss; child: baccha bachcha bacche; parents: parents; car: car gaadi
        gadi; browser: browser; app: app; project: project; years: saal"""),
}

# CJK facts have no spaces: these cues are found as substrings, longest first.
CJK_GLOSS: dict[str, dict[str, str]] = {
    "zh": _table("""
        my: 我的; i: 我; not+anymore: 不再; not: 不 没有 没 别 未;
        quit: 戒掉 戒了 戒; stopped: 停止; started: 开始; moved: 搬到
        搬; now: 现在; again: 又 再; like: 喜欢; love: 爱; hate: 讨厌;
        live: 住; home: 家; work: 工作; called: 叫; name: 名字;
        sister: 姐姐 妹妹; brother: 哥哥 弟弟; mother: 妈妈 母亲;
        father: 爸爸 父亲; wife: 妻子 老婆; husband: 丈夫 老公; son: 儿子;
        daughter: 女儿; friend: 朋友; dog: 狗; cat: 猫; drink: 喝;
        eat: 吃; read: 看 读; go: 去; play: 玩 踢 打; use: 用; have:
        有 养; learn: 学; also: 也 还; pets: 宠物; neighbor: 邻居;
        colleague: 同事; boss: 老板; child: 孩子; parents: 父母;
        car: 车; years: 岁; browser: 浏览器; app: 应用; project:
        项目; _: 已经"""),
    "ja": _table("""
        my: 私の 僕の; i: 私 僕 俺; not: ではありません じゃありません ではない じゃない
        ません ない なかった; anymore: もう; quit: やめ 辞め; started: 始め;
        moved: 引っ越; now: 今は 今; again: また; like: 大好き 好き;
        hate: 嫌い; live: 住; home: 家; work: 働 仕事; name: 名前;
        sister: 姉 妹; brother: 兄 弟; mother: 母 お母さん; father: 父
        お父さん; wife: 妻; husband: 夫; son: 息子; daughter: 娘;
        friend: 友達; dog: 犬; cat: 猫; drink: 飲; eat: 食; read:
        読; watch: 見; go: 行; play: 遊; use: 使; have: 飼; also:
        にも; pets: ペット; neighbor: 隣人; colleague: 同僚; boss:
        上司; child: 子供; parents: 両親; car: 車; years: 歳;
        browser: ブラウザ; app: アプリ; project: プロジェクト"""),
}

# "more" after a negation says "no longer" ("nicht mehr", "ya no", "ne ... plus").
ANYMORE: dict[str, frozenset[str]] = {
    "de": frozenset({"mehr"}),
    "es": frozenset({"ya", "más"}),
    "fr": frozenset({"plus"}),
    "pt": frozenset({"mais"}),
    "it": frozenset({"più"}),
    "nl": frozenset({"meer"}),
    "ru": frozenset({"больше", "уже"}),
    "id": frozenset({"lagi"}),
    "hi": frozenset({"कभी"}),
    "hi-latn": frozenset({"kabhi"}),
}

# Romanised Hindi has no script of its own: these words, common and not English, tell it.
HINGLISH_CUES = frozenset(
    """
hai hain hoon hun mujhe mujhko mera meri mere nahi nahin nhi tha thi rehta rehti karta karti
kya aur bahut pasand ghar kaam naam behen bhai mein ka ki ke ko chhod chhoda diya peena peeta
jata jati jana gaya gayi maine
""".split()
)
# Of those, ones that also read as words of another language: never enough alone.
HINGLISH_WEAK = frozenset(
    {"ka", "ki", "ke", "ko", "mein", "aur", "hun", "naam", "maine", "diya", "gaya", "jana"}
)

# Parts of names ("von Liebig", "da Silva") say nothing of the language a fact is in.
NAME_PARTICLES = frozenset(
    "von van der den de da di del della du dos das le la el al ter ten zu".split()
)

# Cue words that are verbs in the third person: a Spanish, Portuguese or Italian fact that holds
# one and no pronoun is about someone named or implied ("Ana vive en Lisboa", "Trabaja en un
# banco"), not about the user whose pronoun was dropped ("Vivo en Madrid").
THIRD_PERSON: dict[str, frozenset[str]] = {
    "es": frozenset("vive trabaja llama tiene usa es está dejó".split()),
    "pt": frozenset("mora vive trabalha chama tem usa é está fica gosta".split()),
    "it": frozenset("abita vive lavora chiama ha usa è".split()),
}

# Languages that put the verb last ("मुझे चाय पसंद नहीं है": me tea like not is): their
# negation and verb move after the subject, where the rules look for them in English.
VERB_LAST = frozenset({"hi", "hi-latn", "ja"})
VERBS = frozenset(
    {
        "like",
        "love",
        "hate",
        "live",
        "work",
        "drink",
        "eat",
        "read",
        "watch",
        "go",
        "play",
        "use",
        "quit",
        "stopped",
        "started",
        "moved",
        "switched",
    }
)
CHANGES = frozenset({"quit", "stopped", "started", "moved", "switched"})

SNOWBALL = {
    "de": "german",
    "es": "spanish",
    "fr": "french",
    "pt": "portuguese",
    "it": "italian",
    "nl": "dutch",
    "ru": "russian",
    "id": "indonesian",
    "hi": "hindi",
}
STOP_LISTS = {
    "de": "german",
    "es": "spanish",
    "fr": "french",
    "pt": "portuguese",
    "it": "italian",
    "nl": "dutch",
    "ru": "russian",
    "id": "indonesian",
    "hi": "hindi",
    "zh": "chinese",
    "ja": "japanese",
}
